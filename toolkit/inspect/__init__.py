"""inspect layer: reading wheels and ELF libraries and checking them (``toolkit check``).

Imports only ``toolkit.core`` and itself, and never prints. Modules:

* ``checks``: the entry point, ``check_paths`` (orchestration only: per-library rules while
  reading, then ``WHEEL_RULES`` in order);
* ``report``: findings (check, severity, library, message, cause) and the JSON report;
* ``inputs``: wheels, folders and files given to a check, as libraries;
* ``members``: every wheel member read once (``inflate``: zlib-ng, checkpoints), files on
  disk through mmap; ``record``: RECORD hashes and sizes;
* ``resolver``: DT_NEEDED resolution like ld.so (RPATH/RUNPATH, ``--with``; the policy's
  libraries assumed; the system path an input used only to name this machine's copies);
* rules: ``metadata``, ``manylinux`` (policy, platform tag), ``gpu`` (targets, GPU and CPU-only
  libraries, built against), ``hygiene`` (RPATH classes, bundled libraries), ``symbols``
  (versions, undefined, required symbols, interpreter-provided glibc symbols), ``variants``
  (redundant accelerator variants, identical wheels), ``needed`` (every DT_NEEDED accounted
  for), ``machine`` (ELF class/endianness/machine against the platform tag);
* readers and data: ``elf``, ``gpuscan`` (GPU code in any section), ``amdgpu``, ``offload``,
  ``wheelzip`` (safe archive access, size budget), ``policy`` and ``distros`` (manylinux
  policies, derived for every ``manylinux_2_N``), ``demangle``, ``errors``; data:
  ``check.schema.json`` (the ``--json`` contract), ``glibc-symbols.txt``.
"""
