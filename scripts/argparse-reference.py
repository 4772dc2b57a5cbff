"""Real CPython argparse's --help for the SGLang stand-in's launch_server parser, to check the stand-in against.

The stand-in (standin/argparse.mjs) re-implements argparse's help layout in JavaScript. This script rebuilds the
same parser with CPython's own argparse from the stand-in's table and prints format_help(), so the stand-in's
output can be compared byte for byte (test/standin/help.test.ts compares it with the files this wrote):

    node scripts/standin-actions.mjs f | COLUMNS=80 python3 scripts/argparse-reference.py > test/fixtures/sglang-help/f-80.txt

Only the Python standard library is used (argparse, json, sys).
"""

import argparse
import json
import sys

spec = json.load(sys.stdin)
parser = argparse.ArgumentParser(prog=spec["prog"])
for a in spec["actions"]:
    if a["kind"] == "help":
        continue
    kw = {"dest": a["dest"], "help": a["help"] or None}
    if a["kind"] == "store_true":
        kw["action"] = "store_true"
    else:
        if a["choices"] is not None:
            kw["choices"] = a["choices"]
        if a["nargs"] is not None:
            kw["nargs"] = a["nargs"]
        if a["metavar"] is not None:
            kw["metavar"] = a["metavar"]
    if a["required"]:
        kw["required"] = True
    parser.add_argument(*a["optionStrings"], **kw)
sys.stdout.write(parser.format_help())
