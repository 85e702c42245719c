set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "/work/main/bench/results/2026-12-06/hunt-noplug-s33/confirm/plots/iops-vs-numjobs-randread-4k-write.png"
set title "vmbench kernels: randread-4k (write)\nmean of 5 runs per point (of 5 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "fio numjobs"
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
plot "/work/main/bench/results/2026-12-06/hunt-noplug-s33/confirm/plots/iops-vs-numjobs-randread-4k-write.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.030):2:3 with yerrorlines lw 2 pt 5 title "stock bs=16k iodepth=64 rw=write", \
     '' using ($0+0.030):4:5 with yerrorlines lw 2 pt 6 title "noplug bs=16k iodepth=64 rw=write"
