import sys

from trainwell.cli import main

sys.exit(main())
