#!/bin/sh
# grid.sh REF DATA MODEL "sampler args" iters seeds... : wall time and pass/fail per seed
REF=$1; DATA=$2; MODEL=$3; ARGS=$4; IT=$5; shift 5
D=${DRIFT:-./drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-plugins/samplers/.libs:plugins/models/.libs}"
pass=0; n=0; tt=""
for s in "$@"; do
  t0=$(date +%s.%N)
  /usr/bin/time -o ${TMPDIR:-/tmp}/grid-cpu.txt -f "%U %S" $D sample $MODEL --data $DATA $ARGS --iter $IT --seed $s --chains 1 --out ${TMPDIR:-/tmp}/grid-g.csv --quiet 2>/dev/null; cpu=$(awk "{print \$1+\$2}" ${TMPDIR:-/tmp}/grid-cpu.txt); tc="$tc $cpu"
  t1=$(date +%s.%N)
  r=$(python3 "$(dirname "$0")/judge.py" $REF ${TMPDIR:-/tmp}/grid-g.csv)
  w=$(echo "$t1 - $t0" | bc)
  case "$r" in *PASS) pass=$((pass+1));; esac
  n=$((n+1)); tt="$tt $w"
  echo "  seed $s: ${w}s $r"
done
echo "$ARGS --iter $IT: $pass/$n pass; walls:$tt; cpu:$tc"
