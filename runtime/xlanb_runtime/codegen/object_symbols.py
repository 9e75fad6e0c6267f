"""The symbols an ELF object file defines, read from its symbol table.

A cached Numba overload is its object code plus the LLVM bitcode of the same module (for
linking into later compiles).  Loading it, Numba parses the whole bitcode only to learn the
names the module defines (`JitEngine._load_defined_symbols`): about 40% of a warm kernel
load.  The object file's symbol table lists the same names (checked on W5's kernels: every
defined function and global of the bitcode, none more; LLVM's private symbols, which no one
looks up by name, would be the only ones missing), in a few microseconds.

Only 64-bit little-endian ELF (Linux on x86-64 and AArch64) is read; anything else answers
None and the caller parses the bitcode as Numba does.
"""
from __future__ import annotations

import struct

_SECTION = struct.Struct("<IIQQQQIIQQ")    # name, type, flags, addr, offset, size, link, ...
_SYMBOL = struct.Struct("<IBBHQQ")         # name, info, other, section index, value, size
_SHT_SYMTAB = 2
_SHN_UNDEF = 0
_SKIPPED_TYPES = (3, 4)                    # STT_SECTION, STT_FILE: not named symbols


def defined_symbols(object_code: bytes) -> set[str] | None:
    """Names of the symbols `object_code` defines (functions, data, commons), or None if
    it is not a 64-bit little-endian ELF file this reader understands."""
    if object_code[:4] != b"\x7fELF" or object_code[4:6] != b"\x02\x01":
        return None
    try:
        (offset,) = struct.unpack_from("<Q", object_code, 0x28)
        entry_size, count = struct.unpack_from("<HH", object_code, 0x3A)
        if entry_size != _SECTION.size:
            return None
        sections = [_SECTION.unpack_from(object_code, offset + i * entry_size)
                    for i in range(count)]
        names: set[str] = set()
        for section in sections:
            if section[1] == _SHT_SYMTAB:
                names |= _section_symbols(object_code, section, sections)
        return names
    except (struct.error, IndexError, ValueError, UnicodeDecodeError):
        return None


def _section_symbols(data: bytes, section: tuple, sections: list) -> set[str]:
    start, size, link, entry_size = section[4], section[5], section[6], section[9]
    if entry_size != _SYMBOL.size:
        raise ValueError("unexpected ELF symbol size")
    strings = sections[link][4]
    names = set()
    for at in range(start + entry_size, start + size, entry_size):   # entry 0 is null
        name, info, _, index, _, _ = _SYMBOL.unpack_from(data, at)
        if index == _SHN_UNDEF or name == 0 or (info & 0xF) in _SKIPPED_TYPES:
            continue
        end = data.index(b"\0", strings + name)
        names.add(data[strings + name:end].decode())
    return names
