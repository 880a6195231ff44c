"""`python -m placemap ...`: see placemap.cli."""

from placemap.cli import main

raise SystemExit(main())
