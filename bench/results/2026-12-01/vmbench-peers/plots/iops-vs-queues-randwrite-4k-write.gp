set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "bench/results/2026-12-01/vmbench-peers/plots/iops-vs-queues-randwrite-4k-write.png"
set title "vmbench peers: randwrite-4k (write)\nmean of 3 runs per point (of 3 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "virtqueues per disk"
set ylabel "IOPS"
set datafile missing '?'
set datafile separator '\t'
set grid ytics
set key outside right top
set yrange [0:*]
set offsets 0.25, 0.25, 0, 0
set format y '%.0f'
set bars 2
set pointsize 1.2
plot "bench/results/2026-12-01/vmbench-peers/plots/iops-vs-queues-randwrite-4k-write.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.060):2:3 with yerrorlines lw 2 pt 5 title "qemu", \
     '' using ($0+0.000):4:5 with yerrorlines lw 2 pt 6 title "vmm", \
     '' using ($0+0.060):6:7 with yerrorlines lw 2 pt 7 title "host"
