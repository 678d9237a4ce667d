from toolkit.cli.main import main

raise SystemExit(main())
