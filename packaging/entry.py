"""What the single executable runs: the ``catalogue`` command."""

import multiprocessing

from catalogue_app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    main()
