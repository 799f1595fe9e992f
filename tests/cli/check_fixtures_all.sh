#!/bin/sh
# packwise fixtures --all: every tag fixture verifies in its own order (and not in the
# other), and the QC4W packed fixtures equal the bytes of tests/data/qc4w/make_golden.py,
# a Python packer written independently from the layout description.
# usage: check_fixtures_all.sh PACKWISE DATA_DIR WORK_DIR
set -eu
pw=$1; data=$2; work=$3
rm -rf "$work"
"$pw" fixtures --all "$work"
test -s "$work/MANIFEST.txt"
n=0
grep 'kind=tags' "$work/MANIFEST.txt" | while read -r file fmt kind order rows blocks rest; do
  f=${fmt#format=}; o=${order#order=}; r=${rows#rows=}; b=${blocks#blocks=}
  "$pw" verify --format "$f" --rows "$r" --blocks "$b" --order "$o" "$work/$file" > /dev/null
  if [ "$o" = row_major ]; then other=input_block_major; else other=row_major; fi
  if "$pw" verify --format "$f" --rows "$r" --blocks "$b" --order "$other" "$work/$file" > /dev/null; then
    echo "$file verifies in $other too"; exit 1
  fi
done
for fam in qc4w_n16k8s2 qc4w_n8k8s2 qc4w_n4k16s2 qc4w_n8k4s1; do
  if [ -f "$work/QC4W.$fam.bin" ]; then
    cmp "$work/QC4W.$fam.bin" "$data/qc4w/golden_$fam.bin"
    n=$((n + 1))
  fi
done
test "$n" -ge 1
echo "fixtures --all: $(grep -c 'bytes=' "$work/MANIFEST.txt") files; $n QC4W families equal the Python golden bytes"
