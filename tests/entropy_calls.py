"""Every output call of arc4py's contract, for the tests that make the OS
refuse entropy (tests/generator/test_entropy_failure.py, tests/generator/test_hardening.py).

``CHILD_SOURCE`` is Python source for the child interpreter that runs under
the failing OS: it defines ``attempt_all()``, which makes each call once and
records what it raised and whether anything reached its target buffer.
``check_all_failed()`` judges that record in the parent.
"""

CHILD_SOURCE = '''
def attempt_all():
    import sys
    import arc4py
    big, small = bytearray(100_000), bytearray(64)
    calls = [
        ("arc4random", arc4py.arc4random, None),
        ("random_u32", arc4py.random_u32, None),
        ("random_u64", arc4py.random_u64, None),
        ("random", arc4py.random, None),
        ("arc4random_buf(16)", lambda: arc4py.arc4random_buf(16), None),
        ("arc4random_buf(3000)", lambda: arc4py.arc4random_buf(3000), None),
        ("arc4random_buf(1<<20)", lambda: arc4py.arc4random_buf(1 << 20), None),
        ("fill(64)", lambda: arc4py.fill(small), small),
        ("fill(100000)", lambda: arc4py.fill(big), big),
        ("arc4random_uniform(10)", lambda: arc4py.arc4random_uniform(10), None),
        ("randbelow(10**40)", lambda: arc4py.randbelow(10 ** 40), None),
        ("randbits(300)", lambda: arc4py.randbits(300), None),
        ("token_bytes()", arc4py.token_bytes, None),
        ("token_hex()", arc4py.token_hex, None),
        ("Random().random()", lambda: arc4py.Random().random(), None),
        ("Random().getrandbits(32)", lambda: arc4py.Random().getrandbits(32), None),
        ("Random().getrandbits(64)", lambda: arc4py.Random().getrandbits(64), None),
        ("Random().getrandbits(300)", lambda: arc4py.Random().getrandbits(300), None),
        ("Random().randrange(10)", lambda: arc4py.Random().randrange(10), None),
        ("stir()", arc4py.stir, None),
    ]
    # numpy seeds itself from the OS when imported: its arrays are tried
    # only if the child loaded them before the OS started refusing.
    if "arc4py._numpy" in sys.modules:
        calls.append(("random_u32(size=9)",
                      lambda: arc4py.random_u32(size=9), None))
    out = {}
    for name, fn, target in calls:
        try:
            value = fn()
        except OSError as e:
            out[name] = {"raised": "OSError", "errno": e.errno,
                         "untouched": target is None or not any(target)}
        except BaseException as e:
            out[name] = {"raised": type(e).__name__, "msg": str(e)}
        else:
            out[name] = {"raised": None, "value": repr(value)[:60]}
    return out
'''

# Calls in CHILD_SOURCE without numpy.
N_CALLS = 20


def check_all_failed(results, expect_errno):
    """Every call raised OSError with ``expect_errno`` and wrote nothing."""
    assert len(results) >= N_CALLS, sorted(results)
    for name, r in results.items():
        assert r["raised"] == "OSError", f"{name}: expected OSError, got {r}"
        assert r["errno"] == expect_errno, (
            f"{name}: errno {r['errno']}, expected {expect_errno}")
        assert r["untouched"], f"{name}: output reached the target buffer"
