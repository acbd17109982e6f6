#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Parses an output of `prof report` back and checks its structure; used by
# tests/e2e/test_outputs.c. Prints "NAME TOTAL" for each function asked about (the weight
# of the samples whose stack holds it), for speedscope also "profile NAME: FUNCTION..." for
# each profile, and exits 0; or prints what is wrong and exits 1.
#   check_outputs.py json|speedscope|svg|html FILE NAME...
import json
import sys
import xml.dom.minidom


def fail(msg):
    print("check_outputs: " + msg)
    sys.exit(1)


def check_json(path, names):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("unit") != "samples" or doc["root"]["name"] != "all":
        fail("unexpected header: unit %r, root %r" % (doc.get("unit"), doc["root"]["name"]))
    if doc["total"] != doc["root"]["total"]:
        fail("total %d but the root's is %d" % (doc["total"], doc["root"]["total"]))
    found = dict.fromkeys(names, 0)
    # Walk the tree; a name's share counts each sample once, at its outermost frame.
    stack = [(doc["root"], frozenset())]
    while stack:
        node, above = stack.pop()
        kids = node["children"]
        if node["self"] + sum(k["total"] for k in kids) != node["total"]:
            fail("%s: self %d + children != total %d" % (node["name"], node["self"], node["total"]))
        if any(kids[i]["total"] < kids[i + 1]["total"] for i in range(len(kids) - 1)):
            fail("%s: children are not sorted by total" % node["name"])
        if node["name"] in found and node["name"] not in above:
            found[node["name"]] += node["total"]
        for k in kids:
            stack.append((k, above | {node["name"]}))
    return doc["total"], found


def check_speedscope(path, names):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
        fail("no speedscope $schema")
    frames = [fr["name"] for fr in doc["shared"]["frames"]]
    if not doc["profiles"]:
        fail("no profiles")
    found = dict.fromkeys(names, 0)
    total = 0
    for p in doc["profiles"]:
        used = sorted(set(frames[i] for s in p["samples"] for i in s if 0 <= i < len(frames)))
        print("profile %s: %s" % (p["name"], " ".join(used)))
        if p["type"] != "sampled" or not isinstance(p["name"], str):
            fail("profile %r is not a named sampled profile" % p.get("name"))
        if len(p["samples"]) != len(p["weights"]):
            fail("%s: %d samples but %d weights" % (p["name"], len(p["samples"]),
                                                   len(p["weights"])))
        if p["startValue"] != 0 or p["endValue"] != sum(p["weights"]):
            fail("%s: endValue %r is not the sum of the weights" % (p["name"], p["endValue"]))
        for s, w in zip(p["samples"], p["weights"]):
            if not s or any(not 0 <= i < len(frames) for i in s):
                fail("%s: a sample has a bad frame index: %r" % (p["name"], s))
            total += w
            for n in set(frames[i] for i in s) & set(names):
                found[n] += w
    return total, found


def check_svg(path, names):
    dom = xml.dom.minidom.parse(path)
    total = int(dom.documentElement.getAttribute("data-total"))
    found = dict.fromkeys(names, 0)
    for g in dom.getElementsByTagName("g"):
        if g.getAttribute("class") != "f":
            continue
        title = g.getElementsByTagName("title")[0].firstChild.data.split("\n")[0]
        if title in found:
            found[title] += int(g.getAttribute("data-t"))
    return total, found


def check_html(path, names):
    # The page's script draws the graph from the data it embeds: the stacks (name indexes,
    # root first), their weights, each one's samples per interval of the run.
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.find('<script type="application/json" id="pf-data">')
    end = text.find("</script>", start)
    if not text.startswith("<!DOCTYPE html>") or start < 0 or end < 0 or \
            '<svg id="pf-svg"' not in text:
        fail("not an HTML page with a graph and its data")
    doc = json.loads(text[text.find(">", start) + 1:end])
    stacks, weights, series = doc["stacks"], doc["weights"], doc["series"]
    if not (len(stacks) == len(weights) == len(series) == len(doc["off"])):
        fail("the data's arrays differ in length")
    found = dict.fromkeys(names, 0)
    for s, w, per in zip(stacks, weights, series):
        if sum(per[1::2]) != w:
            fail("a stack's samples per interval do not add up to its weight")
        for n in set(doc["names"][i] for i in s) & set(names):
            found[n] += w
    total = sum(weights) + doc["empty"]
    if total != doc["total"]:
        fail("the weights do not add up to the total")
    return total, found


def main():
    kind, path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    check = {"json": check_json, "speedscope": check_speedscope, "svg": check_svg,
             "html": check_html}[kind]
    total, found = check(path, names)
    print("total %d" % total)
    for n in names:
        print("%s %d" % (n, found[n]))


main()
