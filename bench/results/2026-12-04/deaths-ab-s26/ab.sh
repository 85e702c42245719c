#!/bin/bash
cd /work/main
for i in 1 2; do
  echo "=== new $i $(date -u +%T)"; bench/vmbench pytest -- -k "test_verify and ram" 2>&1 | grep -E "deaths tried again|triple|hang|stall|passed|failed|^[a-z-]+: /tmp" 
  echo "=== old $i $(date -u +%T)"; VMM_BIN=/work/main/build/x/vmm-s25 bench/vmbench pytest -- -k "test_verify and ram" 2>&1 | grep -E "deaths tried again|triple|hang|stall|passed|failed|^[a-z-]+: /tmp"
done
echo "=== end $(date -u +%T)"
