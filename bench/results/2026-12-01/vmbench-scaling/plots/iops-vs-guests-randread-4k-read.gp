set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "bench/results/2026-12-01/vmbench-scaling/plots/iops-vs-guests-randread-4k-read.png"
set title "vmbench scaling: randread-4k (read)\nmean of 1-2 runs per point (of 3 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "guests at once"
set ylabel "IOPS (sum over guests)"
set datafile missing '?'
set datafile separator '\t'
set grid ytics
set key outside right top
set yrange [0:*]
set offsets 0.25, 0.25, 0, 0
set format y '%.0f'
set logscale y
set yrange [*:*]
set format y '%.0s%c'
set ylabel "IOPS (sum over guests), log scale"
set bars 2
set pointsize 1.2
plot "bench/results/2026-12-01/vmbench-scaling/plots/iops-vs-guests-randread-4k-read.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.030):2:3 with yerrorlines lw 2 pt 5 title "qemu", \
     '' using ($0+0.030):4:5 with yerrorlines lw 2 pt 6 title "vmm"
