import sys

from feedback.cli import main

sys.exit(main())
