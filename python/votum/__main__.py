from votum.cli import main

main()
