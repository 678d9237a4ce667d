"""inspect layer: reading wheels and ELF libraries and checking them (``toolkit check``).

Imports only ``toolkit.core`` and itself, and never prints. Inside, imports go one way
(an import-linter contract in pyproject.toml): ``checks`` > ``inputs`` > ``rules`` >
``report`` | ``readers``.

* ``checks``: the entry point, ``check_paths`` (orchestration only: per-library rules while
  reading, then ``WHEEL_RULES`` in order);
* ``inputs``: wheels, folders and files given to a check, as libraries;
* ``report``: findings (check, severity, library, message, cause) and the JSON report;
  ``check.schema.json`` is the ``--json`` contract;
* ``readers/``: bytes to facts, judging nothing: ``wheelzip`` (safe archive access, size
  budget), ``inflate`` (zlib-ng, checkpoints, packed symbol names), ``members`` (every
  wheel member inflated once, in workers forked early, returning packed symbols; files on
  disk through mmap), ``ranged`` (a byte range read again, passing over what a scan
  skips), ``elf``, ``gpuscan`` (GPU code in any section; places noted in the one
  inflating pass), ``amdgpu``,
  ``offload``, ``demangle``, ``resolver`` (DT_NEEDED resolution like ld.so: RPATH/RUNPATH,
  ``--with``; the policy's libraries assumed; the system path an input used only to name
  this machine's copies), ``policy`` and ``distros`` (manylinux policies, derived for every
  ``manylinux_2_N``), ``errors``;
* ``rules/``: facts to findings: ``metadata``, ``record`` (RECORD hashes and sizes),
  ``manylinux`` (policy, platform tag), ``machine`` (ELF class/endianness/machine against the
  platform tag), ``gpu`` (targets, GPU and CPU-only libraries, built against), ``hygiene``
  (RPATH classes, bundled libraries), ``symbols`` (versions, undefined, required symbols,
  interpreter-provided glibc symbols; data: ``glibc-symbols.txt``), ``variants`` (redundant
  accelerator variants, identical wheels), ``needed`` (every DT_NEEDED accounted for).
"""
