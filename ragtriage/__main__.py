from ragtriage.cli import main

raise SystemExit(main())
