#!/usr/bin/env python3
"""Writes name,mean,sd of posteriordb reference draws (a draws JSON: a
list of chains, each {stan name: [draw, ...]}) as run.sh reads them:
chains pooled, sd with n - 1, Stan's names as drift writes them
(theta[1,2] -> theta.1.2).

    python3 reference-from-draws.py DRAWS.json > reference.csv
"""
import json
import math
import sys


def main():
    with open(sys.argv[1]) as f:
        chains = json.load(f)
    print('name,mean,sd')
    for name in chains[0]:
        xs = [float(x) for c in chains for x in c[name]]
        m = sum(xs) / len(xs)
        sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
        drift = name.replace('[', '.').replace(']', '').replace(',', '.')
        print('%s,%.17g,%.17g' % (drift, m, sd))


if __name__ == '__main__':
    main()
