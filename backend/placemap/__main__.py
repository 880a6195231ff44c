"""`python -m placemap ...`: see placemap.cli.

Output piped into a reader that stops early (`placemap sim s.json | head`) ends the command quietly,
as a C tool ends on SIGPIPE, instead of with a BrokenPipeError traceback. SIGPIPE itself stays
ignored (Python's default): `serve` must not die when a client's socket closes under a write.
"""

import os
import sys

from placemap.cli import main

try:
    code = main()
    sys.stdout.flush()  # a pipe closed after the last print breaks here, still inside the try
except BrokenPipeError:
    # the rest of the output goes nowhere, so that the interpreter's own flush at exit cannot fail again
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 128 + 13  # what a shell reports for a process ended by SIGPIPE
raise SystemExit(code)
