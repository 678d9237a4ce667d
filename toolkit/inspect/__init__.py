"""inspect layer: reading wheels and ELF libraries and checking them (``toolkit check``).

Imports only ``toolkit.core`` and itself, and never prints. Modules:

* ``checks``: the entry point, ``check_paths`` (orchestration only);
* ``report``: findings and the JSON report;
* ``inputs``: wheels, folders and files given to a check, as libraries;
* ``members``: ELF files read from a wheel in place or from disk;
* ``resolver``: DT_NEEDED resolution like ld.so (RPATH/RUNPATH, ``--with``, system);
* rules: ``metadata``, ``manylinux`` (policy, platform tag), ``gpu``, ``hygiene``
  (RPATH, bundled libraries), ``symbols`` (versions, undefined, required symbols);
* readers and data: ``elf``, ``amdgpu``, ``offload``, ``wheelzip``, ``policy``, ``demangle``,
  ``errors``.
"""
