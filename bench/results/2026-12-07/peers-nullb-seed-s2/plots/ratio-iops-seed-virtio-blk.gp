set terminal pngcairo size 960,600 noenhanced font 'sans,10'
set output "/work/main/bench/results/2026-12-07/peers-nullb-seed-s2/plots/ratio-iops-seed-virtio-blk.png"
set title "vmbench peers: seed-virtio-blk\nIOPS / qemu's, paired by repeat (n=3), error bars: 95% interval; guests ran on: testhost"
set ylabel "IOPS ratio to qemu"
set datafile missing '?'
set datafile separator '\t'
set grid ytics
set key outside right top
set offsets 0.4, 0.4, 0, 0
set yrange [0:*]
set bars 2
set pointsize 1.2
plot "/work/main/bench/results/2026-12-07/peers-nullb-seed-s2/plots/ratio-iops-seed-virtio-blk.dat" using 0:(NaN):xtic(1) notitle, \
     1 with lines dt 2 lc 'black' notitle, \
     '' using ($0+0.000):2:3:4 with yerrorbars lw 2 pt 5 title "vmm"
