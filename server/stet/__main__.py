import sys

from .resident.client import main

sys.exit(main())
