#!/bin/bash
# Raw mode with the final devbench, six invocations, each with its own
# host fio baselines (issue 8's devbench target).
cd /work/main
out=${OUT:-/tmp/s28/devraw}
for i in ${RUNS:-1 2 3 4 5 6}; do
  build/x/devbench-s28 --filter ram-randread-qd32-1q-raw,tmpfs-randread-qd32-1q-raw \
    --repeat 2 --quiet-wait 20 --json $out/i$i.json > $out/i$i.txt 2>&1
done
echo done > $out/DONE
