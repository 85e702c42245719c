set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "/work/main/bench/results/2026-12-06/hunt-noplug-s33/confirm/plots/iops-vs-bs-randread-4k-read.png"
set title "vmbench kernels: randread-4k (read)\nmean of 5 runs per point (of 5 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "block size"
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
plot "/work/main/bench/results/2026-12-06/hunt-noplug-s33/confirm/plots/iops-vs-bs-randread-4k-read.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.090):2:3 with yerrorlines lw 2 pt 5 title "stock iodepth=4 numjobs=1 rw=randread", \
     '' using ($0-0.030):4:5 with yerrorlines lw 2 pt 6 title "stock iodepth=64 numjobs=4 rw=randread", \
     '' using ($0+0.030):6:7 with yerrorlines lw 2 pt 7 title "noplug iodepth=4 numjobs=1 rw=randread", \
     '' using ($0+0.090):8:9 with yerrorlines lw 2 pt 8 title "noplug iodepth=64 numjobs=4 rw=randread"
