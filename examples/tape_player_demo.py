"""Export the tape player for y = x**2 as one self-contained HTML page.

The page needs no kernel and no network: open it in any browser, press Play
(or the space bar) and watch the record run forward, then the cotangent flow
back from y to x until dy/dx = 6.0 appears.

Run: python examples/tape_player_demo.py x_squared.html [--classroom]
"""

import argparse
import os
import sys

# Runs from a checkout too, without `pip install -e .`.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import autodiff as ad  # noqa: E402
import widgets  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="where to write the HTML page")
    parser.add_argument("--classroom", action="store_true",
                        help="start in classroom mode (large type, high contrast)")
    args = parser.parse_args(argv)

    x = ad.Variable(3.0, name="x")
    with ad.GradientTape() as tape:
        y = x ** 2
    print(tape)
    widgets.export_html(tape, args.path, target=y, sources=x, names={"y": y},
                        classroom=args.classroom)
    print(f"wrote {args.path}: open it in a browser and press Play")


if __name__ == "__main__":
    main()
