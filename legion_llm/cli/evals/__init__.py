"""`legion-llm eval ...`: every eval suite's command, its batch variant and the one log writer."""
