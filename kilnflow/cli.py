"""The `kilnflow` console script: `kilnflow demo` walks through what kilnflow does."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kilnflow", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="run the guided demo")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from kilnflow import demo
        demo.run()
        return 0
    parser.print_help()
    return 1


if __name__ == "__main__":
    sys.exit(main())
