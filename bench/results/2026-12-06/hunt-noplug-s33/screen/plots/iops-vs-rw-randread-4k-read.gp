set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "/work/main/bench/results/2026-12-06/hunt-noplug-s33/screen/plots/iops-vs-rw-randread-4k-read.png"
set title "vmbench kernels: randread-4k (read)\nmean of 2 runs per point (of 2 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "rw"
set ylabel "IOPS"
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
set ylabel "IOPS, log scale"
set bars 2
set pointsize 1.2
plot "/work/main/bench/results/2026-12-06/hunt-noplug-s33/screen/plots/iops-vs-rw-randread-4k-read.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.390):2:3 with yerrorlines lw 2 pt 5 title "stock bs=16k iodepth=64 numjobs=4", \
     '' using ($0-0.330):4:5 with yerrorlines lw 2 pt 6 title "stock bs=4k iodepth=4 numjobs=1", \
     '' using ($0-0.270):6:7 with yerrorlines lw 2 pt 7 title "stock bs=4k iodepth=64 numjobs=1", \
     '' using ($0-0.210):8:9 with yerrorlines lw 2 pt 8 title "stock bs=4k iodepth=64 numjobs=2", \
     '' using ($0-0.150):10:11 with yerrorlines lw 2 pt 9 title "stock bs=512 iodepth=16 numjobs=1", \
     '' using ($0-0.090):12:13 with yerrorlines lw 2 pt 10 title "stock bs=64k iodepth=4 numjobs=2", \
     '' using ($0-0.030):14:15 with yerrorlines lw 2 pt 11 title "stock bs=64k iodepth=64 numjobs=4", \
     '' using ($0+0.030):16:17 with yerrorlines lw 2 pt 12 title "noplug bs=16k iodepth=64 numjobs=4", \
     '' using ($0+0.090):18:19 with yerrorlines lw 2 pt 13 title "noplug bs=4k iodepth=4 numjobs=1", \
     '' using ($0+0.150):20:21 with yerrorlines lw 2 pt 14 title "noplug bs=4k iodepth=64 numjobs=1", \
     '' using ($0+0.210):22:23 with yerrorlines lw 2 pt 15 title "noplug bs=4k iodepth=64 numjobs=2", \
     '' using ($0+0.270):24:25 with yerrorlines lw 2 pt 16 title "noplug bs=512 iodepth=16 numjobs=1", \
     '' using ($0+0.330):26:27 with yerrorlines lw 2 pt 17 title "noplug bs=64k iodepth=4 numjobs=2", \
     '' using ($0+0.390):28:29 with yerrorlines lw 2 pt 18 title "noplug bs=64k iodepth=64 numjobs=4"
