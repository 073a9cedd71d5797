"""Command line: ``python -m widgets render NAME --params '{json}' --format html|svg|json``.

Used by ``filters/widget.lua`` at build time; prints to stdout."""
from __future__ import annotations

import argparse
import json
import sys

from . import NAMES, get, problems, render, standalone_svg, static_html, summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m widgets")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render", help="print the static rendering of a widget")
    r.add_argument("name")
    r.add_argument("--params", default="{}", help="initial parameters as JSON")
    r.add_argument("--format", choices=("html", "svg", "json"), default="html")
    r.add_argument("--caption", default="", help="caption, already HTML (format html only)")
    sub.add_parser("list", help="print the widget names")
    args = ap.parse_args(argv)
    if args.command == "list":
        print("\n".join(NAMES))
        return 0
    params = json.loads(args.params)
    wrong = problems(args.name, params)
    if wrong:                      # filters/widget.lua reports this with the chapter's file and line
        sys.stderr.write("; ".join(wrong) + "\n")
        return 2
    if args.format == "html":
        out = static_html(args.name, params, args.caption)
    elif args.format == "svg":
        out = standalone_svg(args.name, params)
    else:
        result = render(args.name, params)
        result["svg"] = standalone_svg(args.name, params)
        module = get(args.name)
        if hasattr(module, "key_frames"):     # animations: a few frames side by side in print
            steps = module.key_frames(result["params"])
            result["frames"] = [standalone_svg(args.name, {**params, "step": s, "_width": 300}) for s in steps]
            result["frame_steps"] = steps
            states = [render(args.name, {**params, "step": s}) for s in steps]
            result["readouts"] = states[-1]["readouts"]
            # alt text: what each frame shows, in words (the step number alone said "Step 4")
            result["frame_alts"] = [summary(module, r["params"], r) for r in states]
        elif hasattr(module, "print_frames"):  # a few telling states side by side, each one's readouts
            frames = module.print_frames(result["params"])
            result["frames"] = [standalone_svg(args.name, {**params, **over, "_width": 300}) for _, over in frames]
            result["frame_steps"] = list(range(1, len(frames) + 1))
            result["frame_labels"] = [label for label, _ in frames]
            states = [(label, render(args.name, {**params, **over})) for label, over in frames]
            result["frame_readouts"] = [r["readouts"] for _, r in states]
            # alt text: what each drawing shows, in words (its label alone said "As set")
            result["frame_alts"] = [f"{label}: {summary(module, r['params'], r)}" for label, r in states]
            result["frame_messages"] = [r.get("message") for _, r in states]
        result["alt"] = summary(module, result["params"], render(args.name, params))
        out = json.dumps(result)
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
