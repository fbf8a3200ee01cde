from agentlog._console import main

if __name__ == "__main__":
    main()
