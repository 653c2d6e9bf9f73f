"""Facts about this machine that the ``arc4py`` command's parts share
(``info``, the bench): below both, importing neither."""


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or platform as a fallback)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware",
                                   "cpu model", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine() or "unknown"
