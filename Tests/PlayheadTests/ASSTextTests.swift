import Testing

@testable import PlayheadMedia

/// An ASS event's text as a cue's plain text: the rule alone.
@Suite struct ASSTextTests {
    @Test func styledTextIsTheEventsNinthField() {
        #expect(ASSText.styled(event: #"0,0,Default,,0,0,0,,{\i1}Bonjour{\i0}, le monde"#) == #"{\i1}Bonjour{\i0}, le monde"#)
        #expect(ASSText.styled(event: "3,0,Default,Narrator,0,0,0,,a,b,c") == "a,b,c", "commas in the text are kept")
        #expect(ASSText.styled(event: "not an event") == "not an event")
    }

    @Test func plainTextLosesOverridesAndKeepsLines() {
        #expect(ASSText.plain(#"{\i1}Bonjour{\i0}, le monde"#) == "Bonjour, le monde")
        #expect(ASSText.plain(#"Deux\Nlignes\nici"#) == "Deux\nlignes ici", "\\n is a soft break: a space")
        #expect(ASSText.plain(#"{\b1}{unclosed brace"#) == "{unclosed brace", "a { no } closes is text, as libass shows it")
        #expect(ASSText.plain(String(repeating: "{", count: 100_000)).count == 100_000, "linear in the text")
        #expect(ASSText.plain(#"a\hb"#) == "a b")
        #expect(ASSText.plain(#"{\pos(10,20)\c&H00FF00&}green{\r}"#) == "green")
        #expect(ASSText.plain(#"back\slash and \"#) == #"back\slash and \"#, "an escape it does not know is kept")
        #expect(ASSText.plain("") == "")
    }
}
