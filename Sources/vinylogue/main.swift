import VinylogueCLI

await VinylogueCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
