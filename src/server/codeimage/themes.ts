/**
 * ray.so's gradient themes: the background is `linear-gradient(140deg, from, to)` and each theme
 * has a light and a dark syntax palette. Gradients and the first thirteen palettes are ray.so's
 * published values (decisions Appendix); bitmap and wrapped are partner themes there with their
 * own fonts, so their palettes here are ours, drawn from their gradients.
 */
import type { CodeImageTheme } from '../../shared/schemas/codeimage.js'

export interface Palette {
  foreground: string
  constant: string
  string: string
  comment: string
  keyword: string
  parameter: string
  function: string
  stringExpression: string
  punctuation: string
  link: string
  number: string
  property: string
  /** Background and left border of highlighted lines; derived from the foreground when absent. */
  highlight?: string
  highlightBorder?: string
}

export interface Theme {
  name: CodeImageTheme
  from: string
  to: string
  light: Palette
  dark: Palette
}

type Row = [from: string, to: string, light: Palette, dark: Palette]

/** A palette from ray.so's field order: foreground, constant, string, comment, keyword, parameter, function, stringExpression, punctuation, link, number, property. */
function p(colors: string, extra: Partial<Palette> = {}): Palette {
  const c = colors.split(' ').map((x) => '#' + x)
  return {
    foreground: c[0], constant: c[1], string: c[2], comment: c[3], keyword: c[4], parameter: c[5],
    function: c[6], stringExpression: c[7], punctuation: c[8], link: c[9], number: c[10], property: c[11], ...extra,
  }
}

const grey = {
  light: p('111111 666666 666666 999999 666666 666666 111111 666666 666666 666666 111111 666666'),
  dark: p('ffffff a7a7a7 a7a7a7 666666 a7a7a7 a7a7a7 ffffff a7a7a7 a7a7a7 a7a7a7 ffffff a7a7a7'),
}

const ROWS: Record<CodeImageTheme, Row> = {
  candy: ['#A58EFB', '#E9BFF8',
    p('434447 2286A6 B2762E 8D949B DC155E 009033 009033 B2762E d15a8b d15a8b 676DFF 2286A6'),
    p('FFFFFF 1AC8FF DFD473 807796 FF659C 1AC8FF 73DFA5 DFD473 FF659C FF659C 7A7FFD 1AC8FF')],
  crimson: ['#FF6363', '#733434',
    p('685B5B C94F0A 836250 978A8A BE3B3B 9E7070 9E7070 836250 BE3B3B BE3B3B C94F0A D15510'),
    p('FEFDFD D15510 EBB99D 895E60 EB6F6F C88E8E C88E8E EBB99D EB6F6F EB6F6F FDA97A D15510')],
  falcon: ['#BDE3EC', '#363654',
    p('464C65 839AA7 506483 9DA4AD 5C827D 6A7C9F 6A7C9F 46615D 5C827D 5C827D AE6A65 839AA7'),
    p('FFFFFF 799DB1 6A8697 6D7E88 9AB6B2 6D88BB 6D88BB 789083 9AB6B2 9AB6B2 BD9C9C 799DB1')],
  meadow: ['#59D499', '#A0872D',
    p('54594D B6781B 837E50 72806E 049649 798B52 798B52 837E50 049649 049649 2C8801 B6781B'),
    p('FFFFFF E4B165 E9EB9D 708B6C 6DD79F B3D767 B3D767 E9EB9D 6DD79F 6DD79F 46B114 E4B165')],
  midnight: ['#4CC8C8', '#202033',
    p('434447 766599 5F758F 78808C 587678 2F788F 2F788F 5F758F 587678 5A797A 2D8264 766599'),
    p('FFFFFF 9681C2 6D86A4 4A4C56 7DA9AB 51D0F8 51D0F8 6D86A4 7DA9AB 7DA9AB 75D2B1 9681C2')],
  raindrop: ['#8EC7FB', '#1C55AA',
    p('687077 007BA1 507683 6E7780 008DAC 4F9488 4F9488 507683 008DAC 008DAC 7459E1 007BA1'),
    p('E4F2FF 008BB7 9DD8EB 6C808B 2ED9FF 1AD6B5 1AD6B5 9DD8EB 2ED9FF 2ED9FF 9984EE 008BB7')],
  sunset: ['#FFCF73', '#FF7A2F',
    p('737568 AD5A78 8C703C 7A7055 A1642C 807410 807410 8C703C A1642C A1642C 856F00 AD5A78'),
    p('FFFFFF E978A1 F9D38C 878572 FFAF65 E2D66B E2D66B F9D38C FFAF65 FFAF65 E7CF55 E978A1')],
  breeze: ['#CF2F98', '#6A3DEC',
    p('434447 0B7880 886594 8C828B 496EB8 C44170 C44170 886594 C44170 625B6B 24805E 0B7880'),
    p('FFFFFF 49E8F2 E9AEFE 8A757D 6599FF F8518D F8518D E9AEFE F8518D ECFEEF 55E7B2 49E8F2')],
  ice: ['#FFFFFF', '#80DEEA',
    p('1C1B29 00B0E9 6ABAD8 BDC0C1 81909D 1E3C78 1E3C78 7BBCD8 1E3C78 1E3C78 00B0E9 00B0E9', { highlight: 'rgba(0,167,219,0.1)', highlightBorder: '#00B0E9' }),
    p('FFFFFF 92DEF6 92DEF6 5C6A70 BFC4C9 778CB6 778CB6 89C3DC 778CB6 778CB6 00B0E9 00B0E9', { highlight: 'rgba(146,222,246,0.14)', highlightBorder: '#92DEF6' })],
  sand: ['#EED5B6', '#AF8856',
    p('262217 A28C4E A28C4E C4B39C 906937 DA8744 DA8744 C57416 DA8744 DA8744 A28C4E A28C4E', { highlight: 'rgba(218,135,68,0.1)', highlightBorder: '#DA8744' }),
    p('FFFFFF C2B181 C2B181 837E77 D3B48C F4A361 F4A361 EED5B8 F4A361 F4A361 C2B181 C2B181', { highlight: 'rgba(244,163,97,0.14)', highlightBorder: '#F4A361' })],
  forest: ['#506853', '#213223',
    p('262217 55725A 828069 869288 6A8458 6B8F71 4B8042 9D891C 78876E 78876E 78876E 2E382F', { highlight: 'rgba(75,148,66,0.12)', highlightBorder: '#4B9442' }),
    p('FFFFFF 6B8F71 C9C8BC 555E56 AAB4A3 6B8F71 87B882 CCBD6E AAB4A3 AAB4A3 AAB4A3 C9C7BC', { highlight: 'rgba(170,180,163,0.14)', highlightBorder: '#6B8F71' })],
  mono: ['#333333', '#181818', grey.light, grey.dark],
  noir: ['#B1B1B1', '#181818', grey.light, grey.dark],
  bitmap: ['#881616', '#F1393F',
    p('2A1A1A B3261E 8A4B2A 9E8A8A C4161C 7A3E3E A8323E 8A4B2A C4161C C4161C B3261E 7A3E3E'),
    p('FFFFFF FF8A80 FFC9B9 8C6B6B FF5A5F F4A6A6 FFD0D0 FFC9B9 FF5A5F FF5A5F FF8A80 F4A6A6')],
  wrapped: ['#EA580C', '#F97316',
    p('3B2A1E C2410C 9A5B13 A8927F EA580C B45309 C2410C 9A5B13 EA580C EA580C C2410C B45309'),
    p('FFFFFF FDBA74 FED7AA 8A7260 FB923C FCD34D FDBA74 FED7AA FB923C FB923C FB923C FDBA74')],
}

export const THEMES: Record<CodeImageTheme, Theme> = Object.fromEntries(
  Object.entries(ROWS).map(([name, [from, to, light, dark]]) => [name, { name, from, to, light, dark }]),
) as Record<CodeImageTheme, Theme>
