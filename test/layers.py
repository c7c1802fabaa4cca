#!/usr/bin/python3
"""test/layers.py: the layers of src/ hold.

Reads the built objects (src/**/*.o) with nm, makes the graph of which file
calls (or reads a variable of) which, and fails when
  - files call each other in a circle, or
  - a file calls a file of a higher layer, or
  - a source file is longer than MAX_LINES (files a reader can hold in one
    sitting).
Usage: make && /usr/bin/python3 test/layers.py [-v]
"""
import collections
import glob
import os
import subprocess
import sys

MAX_LINES = 1250

# higher calls lower; equal ranks may call each other (but not in a circle)
RANKS = {
    'materialized_table': 9,    # _PG_init
    'bgw/worker': 9,            # the worker process's main
    'hooks': 8,
    'commands': 7,
    'parser': 6,
    'lifecycle': 5,
    'scheduler': 4,
    'continuous': 4,
    'refresh': 3,
    'catalog': 2,
    'bgw/launcher': 1,          # the launcher and the shared slots others signal
    'utils': 1,
}


def rank(name):
    return RANKS.get(name, RANKS.get(name.split('/')[0]))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    src = os.path.join(root, 'src')
    objs = sorted(glob.glob(os.path.join(src, '**', '*.o'), recursive=True))
    if not objs:
        sys.exit('layers: no objects in src/: run make first')
    defs, uses = {}, collections.defaultdict(set)
    names = []
    for o in objs:
        name = os.path.relpath(o, src)[:-2]
        names.append(name)
        out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defs[p[2]] = name
            elif len(p) == 2 and p[0] == 'U':
                uses[name].add(p[1])
    graph = {n: sorted({defs[s] for s in uses[n] if s in defs and defs[s] != n}) for n in names}
    problems = []
    for n in names:
        with open(os.path.join(src, n + '.c')) as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            problems.append('%s.c: %d lines (at most %d)' % (n, lines, MAX_LINES))
        if rank(n) is None:
            problems.append('%s: in no layer (add its folder to RANKS)' % n)
    for n in names:
        for m in graph[n]:
            if rank(n) is not None and rank(m) is not None and rank(m) > rank(n):
                syms = sorted(s for s in uses[n] if defs.get(s) == m)
                problems.append('%s calls up into %s: %s' % (n, m, ' '.join(syms)))
    # circles: strongly connected components (Tarjan, iterative)
    index, low, onstack, stack, sccs = {}, {}, set(), [], []
    counter = [0]
    for start in names:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                onstack.add(v)
            if i < len(graph[v]):
                work.append((v, i + 1))
                w = graph[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in onstack:
                    low[v] = min(low[v], index[w])
                continue
            for w in graph[v]:
                if w in onstack:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    for comp in sccs:
        problems.append('circle of %d files: %s' % (len(comp), ' '.join(comp)))
    if '-v' in sys.argv:
        for n in names:
            print('%-28s -> %s' % (n, ' '.join(graph[n])))
    edges = sum(len(v) for v in graph.values())
    if problems:
        print('layers: %d files, %d calls between them; FAILED:' % (len(names), edges))
        for p in problems:
            print('  ' + p)
        sys.exit(1)
    print('layers: %d files, %d calls between them, no circle, no call up a layer' % (len(names), edges))


main()
