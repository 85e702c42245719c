set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "bench/results/2026-12-06/seed004-2x2-s33/plots/ratio-iops-seed-virtio-blk.png"
set title "Seed 004 on Linux 6.1: guest batching x device batching (RAM disk, reduced job): seed-virtio-blk\nIOPS / stock-nobatch's, paired by repeat (n=5), error bars: 95% interval; guests ran on: testhost"
set ylabel "IOPS ratio to stock-nobatch"
set datafile missing '?'
set datafile separator '\t'
set grid ytics
set key outside right top
set offsets 0.4, 0.4, 0, 0
set yrange [0:*]
set bars 2
set pointsize 1.2
plot "bench/results/2026-12-06/seed004-2x2-s33/plots/ratio-iops-seed-virtio-blk.dat" using 0:(NaN):xtic(1) notitle, \
     1 with lines dt 2 lc 'black' notitle, \
     '' using ($0-0.080):2:3:4 with yerrorbars lw 2 pt 5 title "stock-batch", \
     '' using ($0+0.000):5:6:7 with yerrorbars lw 2 pt 6 title "noplug-nobatch", \
     '' using ($0+0.080):8:9:10 with yerrorbars lw 2 pt 7 title "noplug-batch"
