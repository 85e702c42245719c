#!/bin/bash
# inside the test host: $1 = vmm, $2 = runs in all, $3 = seconds each.
# Odd runs IFPOLL, even runs IFTRAP; resumes after $O/runs.txt.
VMM=$1; N=$2; S=$3; D=$(dirname "$0"); O=$TESTHOST_OUT
touch $O/runs.txt
start=$(($(wc -l < $O/runs.txt) + 1))
# the run a lock-up interrupted counts as one
[ -f $O/current ] && { echo "$(cat $O/current) lockup" >> $O/runs.txt; rm -f $O/current; start=$((start + 1)); }
timeout 20 $VMM run -k $D/IFTRAP_STI.img -m 32M > $O/sti.out 2>&1; echo "boot control status $? traps $(grep -ac TRAP $O/sti.out)" >> $O/log
for i in $(seq $start $N); do
	img=IFPOLL; [ $((i % 2)) = 0 ] && img=IFTRAP
	echo "$i $img" > $O/current; sync
	$VMM run -k $D/$img.img -m 32M </dev/null >$O/run.$i.out 2>&1 &
	pid=$!; sleep $S; kill -TERM $pid 2>/dev/null
	n=0; while [ $n -lt 100 ] && grep -qs '^[0-9]* (.*) [^Z] ' /proc/$pid/stat; do sleep 0.1; n=$((n+1)); done
	[ $n -ge 100 ] && kill -KILL $pid
	wait $pid; rc=$?
	echo "$i $img status=$rc traps=$(grep -ac TRAP $O/run.$i.out)" >> $O/runs.txt
	rm -f $O/current; touch $O/heartbeat
done
