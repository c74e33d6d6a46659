from legion_llm.cli.app import main

main()
