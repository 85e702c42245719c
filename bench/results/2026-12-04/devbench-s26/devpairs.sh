#!/bin/bash
# Alternate two devbench builds, 6 pairs, order swapped every other pair.
cd /work/main
out=/tmp/devbench-s26; mkdir -p $out
for i in 1 2 3 4 5 6; do
  if [ $((i % 2)) = 1 ]; then order="s25base s26c"; else order="s26c s25base"; fi
  for b in $order; do
    build/x/devbench-$b --filter ram-randread-qd32-1q-raw,ram-randread-qd32-1q-off,tmpfs-randread-qd32-1q-off \
      --repeat 2 --quiet-wait 20 --json $out/p$i-$b.json > $out/p$i-$b.txt 2>&1
  done
done
echo done > $out/DONE
