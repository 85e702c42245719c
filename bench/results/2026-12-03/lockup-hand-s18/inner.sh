#!/bin/bash
# inside the test host: $1 = vmm, $2 = runs, $3 = seconds each, $4 = image
VMM=$1; N=$2; S=$3; IMG=${4:-IFTRAP}; D=$(dirname "$0"); O=$TESTHOST_OUT
log() { echo "$(date +%T) $*" | tee -a $O/progress; }
log "control (IF set):"
timeout 20 $VMM run -k $D/IFTRAP_STI.img -m 32M > $O/sti.out 2>&1; log "status $? traps $(grep -ac TRAP $O/sti.out)"
for i in $(seq 1 $N); do
	$VMM run -k $D/$IMG.img -m 32M </dev/null >$O/if0.$i.out 2>&1 &
	pid=$!; sleep $S; kill -TERM $pid 2>/dev/null
	n=0; while [ $n -lt 100 ] && grep -qs '^[0-9]* (.*) [^Z] ' /proc/$pid/stat; do sleep 0.1; n=$((n+1)); done
	if [ $n -ge 100 ]; then
		for t in /proc/$pid/task/*; do printf '%s:%s:%s ' "$(cat $t/comm)" "$(awk '{print $3}' $t/stat)" "$(cat $t/wchan)"; done > $O/stuck.$i
		log "run $i: not stopped 10 s after SIGTERM: $(cat $O/stuck.$i)"; kill -KILL $pid
	fi
	wait $pid; rc=$?
	log "run $i status $rc traps $(grep -ac TRAP $O/if0.$i.out) $(grep -a -m1 TRAP $O/if0.$i.out) $(grep -a -m1 'vCPU' $O/if0.$i.out)"
done
