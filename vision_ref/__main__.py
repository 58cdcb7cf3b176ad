import sys

from vision_ref.cli import main

sys.exit(main())
