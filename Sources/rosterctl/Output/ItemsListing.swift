import RosterProtocol

extension VerbContext {
    /// An answer of `{items}`: with `--json` as the daemon sent it, else `table` of its items and, with the legend,
    /// a `N things listed.` footer.
    func printListing(_ result: JSONValue, _ table: ([JSONValue]) -> Table, one: String, many: String) {
        if json != nil { return printJSON(result) }
        let items = result["items"]?.arrayValue ?? []
        let legend = !options.noLegend
        table(items).render(legend: legend, style: style).forEach(printLine)
        if legend {
            printLine("")
            printLine("\(items.count) \(items.count == 1 ? one : many) listed.")
        }
    }
}
