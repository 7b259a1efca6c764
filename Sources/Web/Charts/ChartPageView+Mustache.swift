import Mustache

// The chart page's fields named for `chart.mustache` and `row.mustache`
// without reflection: Mustache otherwise finds each `{{name}}` through a
// `Mirror` of the value, which was three quarters of a cold chart page's
// time. Every stored property is listed, so a name resolves exactly as it
// did through the mirror (`MustacheFieldTests` checks it against one).

extension ChartPageView: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "layout": layout
        case "user": user
        case "profileURL": profileURL
        case "yearsAgoLabel": yearsAgoLabel
        case "weekLabel": weekLabel
        case "historyURL": historyURL
        case "rediscoverURL": rediscoverURL
        case "yearLabel": yearLabel
        case "yearURL": yearURL
        case "playXSPF": playXSPF
        case "playJSPF": playJSPF
        case "playPage": playPage
        case "previous": previous
        case "next": next
        case "previousURL": previousURL
        case "nextURL": nextURL
        case "kinds": kinds
        case "rows": rows
        case "hasRows": hasRows
        case "emptyText": emptyText
        case "errorText": errorText
        case "hiddenText": hiddenText
        case "retryURL": retryURL
        case "canRetry": canRetry
        case "staleNote": staleNote
        case "nowPlaying": nowPlaying
        case "copyNote": copyNote
        case "wayOn": wayOn
        case "widget": widget
        case "moments": moments
        case "hasMoments": hasMoments
        case "filterAction": filterAction
        case "filterLabel": filterLabel
        case "filterFields": filterFields
        case "filterChoices": filterChoices
        default: nil
        }
    }
}

extension ChartPageView.Row: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "artist": artist
        case "name": self.name
        case "playsLabel": playsLabel
        case "artURL": artURL
        case "monogram": monogram
        case "url": url
        case "external": external
        default: nil
        }
    }
}

extension ChartPageView.Monogram: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "letters": letters
        case "hue": hue
        default: nil
        }
    }
}

extension ChartPageView.YearLink: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "label": label
        case "url": url
        case "enabled": enabled
        default: nil
        }
    }
}

extension ChartPageView.KindLink: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "label": label
        case "url": url
        case "current": current
        default: nil
        }
    }
}

extension ChartPageView.FilterChoice: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "value": value
        case "label": label
        case "selected": selected
        default: nil
        }
    }
}

extension ChartPageView.HiddenField: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "name": self.name
        case "value": value
        default: nil
        }
    }
}

// The layout's fields, read by every page.

extension LayoutFields: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "title": title
        case "csrf": csrf
        case "links": links
        case "bodyClass": bodyClass
        case "feedURL": feedURL
        case "prefetchURL": prefetchURL
        case "themeURL": themeURL
        case "share": share
        default: nil
        }
    }
}

extension SiteLinks: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "home": home
        case "settings": settings
        case "users": users
        case "friendsImport": friendsImport
        case "usersReorder": usersReorder
        case "signIn": signIn
        case "signOut": signOut
        case "everyone": everyone
        case "stylesheet": stylesheet
        case "script": script
        default: nil
        }
    }
}

extension ShareLinks: MustacheParent {
    func child(named name: String) -> Any? {
        switch name {
        case "pageURL": pageURL
        case "imageURL": imageURL
        case "title": title
        case "description": description
        case "imageAlt": imageAlt
        case "imageWidth": imageWidth
        case "imageHeight": imageHeight
        default: nil
        }
    }
}
