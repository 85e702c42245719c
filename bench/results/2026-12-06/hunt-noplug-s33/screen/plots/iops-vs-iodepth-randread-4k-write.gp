set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "/work/main/bench/results/2026-12-06/hunt-noplug-s33/screen/plots/iops-vs-iodepth-randread-4k-write.png"
set title "vmbench kernels: randread-4k (write)\nmean of 2 runs per point (of 2 planned), error bars ±1 sd; guests ran on: testhost"
set xlabel "fio iodepth"
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
plot "/work/main/bench/results/2026-12-06/hunt-noplug-s33/screen/plots/iops-vs-iodepth-randread-4k-write.dat" using 0:(NaN):xtic(1) notitle, \
     '' using ($0-0.450):2:3 with yerrorlines lw 2 pt 5 title "stock bs=16k numjobs=2 rw=randwrite", \
     '' using ($0-0.390):4:5 with yerrorlines lw 2 pt 6 title "stock bs=16k numjobs=4 rw=write", \
     '' using ($0-0.330):6:7 with yerrorlines lw 2 pt 7 title "stock bs=4k numjobs=1 rw=randrw", \
     '' using ($0-0.270):8:9 with yerrorlines lw 2 pt 8 title "stock bs=4k numjobs=1 rw=randwrite", \
     '' using ($0-0.210):10:11 with yerrorlines lw 2 pt 9 title "stock bs=4k numjobs=1 rw=write", \
     '' using ($0-0.150):12:13 with yerrorlines lw 2 pt 10 title "stock bs=512 numjobs=1 rw=randrw", \
     '' using ($0-0.090):14:15 with yerrorlines lw 2 pt 11 title "stock bs=64k numjobs=1 rw=write", \
     '' using ($0-0.030):16:17 with yerrorlines lw 2 pt 12 title "stock bs=64k numjobs=2 rw=write", \
     '' using ($0+0.030):18:19 with yerrorlines lw 2 pt 13 title "noplug bs=16k numjobs=2 rw=randwrite", \
     '' using ($0+0.090):20:21 with yerrorlines lw 2 pt 14 title "noplug bs=16k numjobs=4 rw=write", \
     '' using ($0+0.150):22:23 with yerrorlines lw 2 pt 15 title "noplug bs=4k numjobs=1 rw=randrw", \
     '' using ($0+0.210):24:25 with yerrorlines lw 2 pt 16 title "noplug bs=4k numjobs=1 rw=randwrite", \
     '' using ($0+0.270):26:27 with yerrorlines lw 2 pt 17 title "noplug bs=4k numjobs=1 rw=write", \
     '' using ($0+0.330):28:29 with yerrorlines lw 2 pt 18 title "noplug bs=512 numjobs=1 rw=randrw", \
     '' using ($0+0.390):30:31 with yerrorlines lw 2 pt 19 title "noplug bs=64k numjobs=1 rw=write", \
     '' using ($0+0.450):32:33 with yerrorlines lw 2 pt 20 title "noplug bs=64k numjobs=2 rw=write"
