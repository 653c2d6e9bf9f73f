"""arc4py's bench, in one place: what ``arc4py bench`` runs and what the
longer comparisons of the checkout's bench/*.py reuse.

    command.py   the ``bench`` command: options, collection, exit status
    sources.py   rows and columns: what is measured
    timing.py    loops, calibration, rounds, threads
    report.py    tables and the plot
    machine.py   facts about this machine (CPU model, libc) and the
                 environment of a child interpreter (also ``arc4py info``'s)
    capi.py      the same rows as C calls, through capi_loops.c (the
                 extension arc4py.bench._capi_loops; Linux only)

Importing this package imports none of them: the command line registers
``bench`` by its module's name and imports it when it builds its parser.
"""
