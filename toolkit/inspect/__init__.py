"""inspect layer: reading wheels and ELF libraries and checking them (``toolkit check``).

Imports only ``toolkit.core`` and itself, and never prints. Modules:

* ``checks``: the entry point, ``check_paths`` (orchestration only);
* ``report``: findings (check, severity, library, message, cause) and the JSON report;
* ``inputs``: wheels, folders and files given to a check, as libraries;
* ``members``: every wheel member read once (``inflate``: zlib-ng, checkpoints), files on
  disk through mmap; ``record``: RECORD hashes and sizes;
* ``resolver``: DT_NEEDED resolution like ld.so (RPATH/RUNPATH, ``--with``, system);
* rules: ``metadata``, ``manylinux`` (policy, platform tag), ``gpu`` (targets, GPU and CPU-only
  libraries, built against), ``hygiene`` (RPATH classes, bundled libraries), ``symbols``
  (versions, undefined, required symbols), ``variants`` (redundant accelerator variants,
  identical wheels);
* readers and data: ``elf``, ``gpuscan`` (GPU code in any section), ``amdgpu``, ``offload``,
  ``wheelzip`` (safe archive access, size budget), ``policy`` and ``distros`` (manylinux
  policies, derived for every ``manylinux_2_N``), ``demangle``, ``errors``.
"""
