import sys

from lgacc.cli import main

sys.exit(main())
