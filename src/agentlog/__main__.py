from agentlog.cli import main

main()
