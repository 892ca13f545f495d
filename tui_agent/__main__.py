from tui_agent.entry import main

raise SystemExit(main())
