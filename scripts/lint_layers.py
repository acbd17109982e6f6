#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The layering rules of docs/ARCHITECTURE.md, checked on the include graph (make lint).

Includes are written from the repository root ("sampler/ring.h"), so every edge of the
graph names the folder it goes to. Two rules:
  1. a folder includes only the folders below it (FOLDERS: what each may use; the
     reporter's layers each use only the layers before them in REPORTER_LAYERS);
  2. inside a folder the modules (x.c with x.h) include each other without a cycle, so
     that its files stack in layers that call only downwards.
Given the signal handler's sources (make lint passes those of its handler objects), a
third: every common/ header says in its comment whether the handler's path may use it
("Signal handler's path: allowed" or "... not allowed"), one that is allowed includes only
allowed ones, and the handler's sources reach, through any chain of includes, only
allowed ones. (What they call is checked on their objects: scripts/lint.sh.)
Prints one line per violation and exits 1 if there is any.
  scripts/lint_layers.py [ROOT [HANDLER_SOURCE...]]
"""
import os
import re
import sys

# folder -> the folders (or single headers) its files may include, besides itself
FOLDERS = {
    'arch': [],
    'include/libprof': [],
    'common': ['arch', 'include/libprof/prof_format.h'],
    'sampler': ['arch', 'common', 'include/libprof/prof_format.h'],
    'libprof': ['arch', 'common', 'sampler', 'include/libprof'],
    'attach': ['arch', 'common', 'include/libprof/prof_format.h'],
}
REPORTER_LAYERS = ['base', 'input', 'symbols', 'stacks', 'compare', 'output', 'cmd']
REPORTER_USES = ['common', 'include/libprof/prof_format.h']
REPORTER_CMD_USES = ['attach']  # the out-of-process producer, run by commands only

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
HANDLER_MARK = re.compile(r"Signal handler's path: (allowed|not allowed)")


def allowed_for(folder):
    """What files in folder may include, as path prefixes."""
    if folder in FOLDERS:
        return [folder + '/'] + [a if a.endswith('.h') else a + '/' for a in FOLDERS[folder]]
    if folder.startswith('reporter/'):
        layer = folder.split('/', 1)[1]
        below = REPORTER_LAYERS[:REPORTER_LAYERS.index(layer) + 1]
        uses = REPORTER_USES + (REPORTER_CMD_USES if layer == 'cmd' else [])
        return ['reporter/%s/' % l for l in below] + \
               [a if a.endswith('.h') else a + '/' for a in uses]
    return None


def folders(root):
    out = list(FOLDERS)
    out += ['reporter/' + l for l in REPORTER_LAYERS]
    return [f for f in out if os.path.isdir(os.path.join(root, f))]


def module(path):
    return os.path.splitext(path)[0]


def find_cycle(graph):
    """A cycle in graph (node -> set of nodes) as a list of nodes, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def includes(root, path):
    """The project files path includes, in order."""
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        return []
    text = open(full, encoding='utf-8').read()
    return [inc for inc in INCLUDE.findall(text) if os.path.isfile(os.path.join(root, inc))]


def handler_errors(root, sources):
    """Rule 3: the common/ headers the handler's path may use, and what it reaches."""
    errors = []
    allowed = {}
    common = os.path.join(root, 'common')
    for name in sorted(os.listdir(common)) if os.path.isdir(common) else []:
        if not name.endswith('.h'):
            continue
        path = 'common/' + name
        marks = HANDLER_MARK.findall(open(os.path.join(root, path), encoding='utf-8').read())
        if len(marks) != 1:
            errors.append("%s: says neither \"Signal handler's path: allowed\" nor "
                          "\"... not allowed\" in its comment" % path)
            continue
        allowed[path] = marks[0] == 'allowed'
    for path in sorted(p for p, ok in allowed.items() if ok):
        for inc in includes(root, path):
            if inc.startswith('common/') and not allowed.get(inc, False):
                errors.append('%s: allowed on the handler\'s path, includes "%s", which is '
                              'not' % (path, inc))
    for src in sources:
        via = {src: None}
        todo = [src]
        while todo:
            path = todo.pop(0)
            for inc in includes(root, path):
                if inc not in via:
                    via[inc] = path
                    todo.append(inc)
        for path in sorted(p for p in via if p.startswith('common/') and not allowed.get(p)):
            chain = [path]
            while via[chain[-1]] is not None:
                chain.append(via[chain[-1]])
            errors.append('%s: on the signal handler\'s path, reaches "%s" (%s), which is not '
                          'allowed there' % (src, path, ' <- '.join(chain[1:])))
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    errors = []
    stray = [d for d in sorted(os.listdir(os.path.join(root, 'reporter')))
             if d not in REPORTER_LAYERS] if os.path.isdir(os.path.join(root, 'reporter')) else []
    for d in stray:
        errors.append('reporter/%s: not one of the reporter\'s layers (%s)' %
                      (d, ', '.join(REPORTER_LAYERS)))
    for folder in folders(root):
        allowed = allowed_for(folder)
        graph = {}
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith(('.c', '.h')):
                continue
            path = folder + '/' + name
            text = open(os.path.join(root, path), encoding='utf-8').read()
            me = module(path)
            graph.setdefault(me, set())
            for line_no, inc in ((text.count('\n', 0, m.start()) + 1, m.group(1))
                                 for m in INCLUDE.finditer(text)):
                if not any(inc == a or (a.endswith('/') and inc.startswith(a)) for a in allowed):
                    errors.append('%s:%d: includes "%s", which %s/ may not use' %
                                  (path, line_no, inc, folder))
                elif inc.startswith(folder + '/') and '/' not in inc[len(folder) + 1:]:
                    if module(inc) != me:
                        graph[me].add(module(inc))
        cycle = find_cycle(graph)
        if cycle:
            errors.append('%s/: modules include each other in a cycle: %s' %
                          (folder, ' -> '.join(os.path.basename(c) for c in cycle)))
    errors += handler_errors(root, sys.argv[2:]) if len(sys.argv) > 2 else []
    for e in errors:
        print('lint: layering: ' + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
