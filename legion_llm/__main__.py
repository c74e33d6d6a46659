from legion_llm.entry import main

main()
