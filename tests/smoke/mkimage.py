#!/usr/bin/env python3
"""Wrap a flat 64-bit blob (entry at +0x200) in a minimal bzImage header:
mkimage.py BLOB OUT [--old] [--no-reloc] [--no-64] [--bad-magic] [--truncated]
or in an ELF executable like a vmlinux (one PT_LOAD at physical 16 MiB with
64 KiB of bss, entered at +0x200): mkimage.py BLOB OUT --elf [--bad-entry]
(--bad-entry: the entry point is the virtual address, outside any segment)

syssize (0x1f4) is set to the body's length in 16-byte units, as a real
bzImage has it; --truncated leaves out the last 512 bytes of the body (a
file cut short: the header promises more than the file holds)."""
import struct, sys

def elf(body, bad_entry):
    paddr, vaddr = 0x1000000, 0xFFFFFFFF81000000
    entry = (vaddr if bad_entry else paddr) + 0x200
    ehdr = bytearray(64)
    ehdr[0:4] = b"\x7fELF"
    ehdr[4:7] = bytes([2, 1, 1])        # ELFCLASS64, little-endian, v1
    struct.pack_into("<HHIQQQIHHHHHH", ehdr, 16, 2, 62, 1, entry, 64, 0, 0,
                     64, 56, 1, 0, 0, 0)  # ET_EXEC, EM_X86_64, 1 phdr
    phdr = struct.pack("<IIQQQQQQ", 1, 7, 0x1000, vaddr, paddr, len(body),
                       len(body) + 0x10000, 0x1000)   # PT_LOAD, RWX
    img = bytes(ehdr) + phdr
    return img + bytes(0x1000 - len(img)) + body

def main():
    blob, out = sys.argv[1], sys.argv[2]
    flags = sys.argv[3:]
    if "--elf" in flags:
        body = open(blob, "rb").read()
        open(out, "wb").write(elf(body, "--bad-entry" in flags))
        return
    ver = 0x20F
    if "--old" in flags:
        ver = 0x20A
    setup = bytearray(2 * 512)          # setup_sects = 1
    setup[0x1F1] = 1
    struct.pack_into("<H", setup, 0x1FE, 0xAA55)
    setup[0x200:0x202] = b"\xeb\x66"    # header ends at 0x268
    setup[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", setup, 0x206, ver)
    setup[0x211] = 0x01                 # LOADED_HIGH
    struct.pack_into("<I", setup, 0x22C, 0x7FFFFFFF)   # initrd_addr_max
    struct.pack_into("<I", setup, 0x230, 0x200000)     # kernel_alignment
    setup[0x234] = 0 if "--no-reloc" in flags else 1
    struct.pack_into("<H", setup, 0x236, 0 if "--no-64" in flags else 0x1)
    struct.pack_into("<I", setup, 0x238, 2047)         # cmdline_size
    struct.pack_into("<Q", setup, 0x258, 0x1000000)    # pref_address
    struct.pack_into("<I", setup, 0x260, 0x100000)     # init_size
    if "--bad-magic" in flags:
        setup[0x202:0x206] = b"HdrX"
    body = open(blob, "rb").read()
    body += bytes(-len(body) % 16)
    struct.pack_into("<I", setup, 0x1F4, len(body) // 16)   # syssize
    if "--truncated" in flags:
        body = body[:-512]
    open(out, "wb").write(bytes(setup) + body)

main()
