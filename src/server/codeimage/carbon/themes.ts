/**
 * carbon.now.sh's themes as Plaza's palettes: our own table, made from each theme's published
 * colours (the editor background and the CodeMirror token colours carbon lists for it), mapped
 * onto the renderer's roles:
 *
 *   foreground ← text, keyword ← keyword, string and stringExpression ← string, comment ← comment,
 *   number ← number, property ← property, function ← definition, parameter ← variable,
 *   constant ← attribute, punctuation ← operator, link ← meta.
 */
import type { CarbonTheme } from '../../../shared/schemas/carbon.js'
import type { Palette } from '../themes.js'

export interface CarbonPalette {
  /** The editor's (window's) background; verminal's is translucent. */
  background: string
  light: boolean
  palette: Palette
}

/** background, then text keyword string comment number property definition variable attribute operator meta. */
type Row = [background: string, colors: string, light?: 'light']

const ROWS: Record<CarbonTheme, Row> = {
  '3024-night': ['#090300', 'd6d5d4 db2d20 fded02 cdab53 a16a94 01a252 e8bbd0 01a252 00c fff 555'],
  'a11y-dark': ['#2b2b2b', 'f8f8f2 ffa07a ffd700 d4d0ab dcc6e0 abe338 ffd700 00e0e0 abe338 f8f8f2 d4d0ab'],
  blackboard: ['#0C1021', 'F8F8F8 FBDE2D 61CE3C AEAEAE D8FA3C fff 8DA6CE FF6400 8DA6CE fff D8FA3C'],
  'base16-dark': ['#151515', 'e0e0e0 ac4142 f4bf75 8f5536 aa759f 90a959 d28445 90a959 00c fff 555'],
  'base16-light': ['#f5f5f5', '202020 ac4142 f4bf75 8f5536 aa759f 90a959 d28445 90a959 90a959 000 555', 'light'],
  cobalt: ['#002240', 'fff ffee80 3ad900 08f ff80e1 fff fff 9effff ff80e1 fff ff9d00'],
  dracula: ['#282a36', 'f8f8f2 ff79c6 f1fa8c 6272a4 bd93f9 66d9ef 50fa7b 50fa7b 50fa7b ff79c6 f8f8f2'],
  'duotone-dark': ['#2a2734', '6c6783 ffcc99 ffb870 6c6783 ffcc99 9a86fd eeebff ffcc99 ffcc99 ffad5c 555'],
  hopscotch: ['#322931', 'd5d3d5 dd464c fdcc59 b33508 c85e7c 8fc13e fd8b19 8fc13e 8fc13e fff 555'],
  lucario: ['#2b3e50', 'f8f8f2 ff6541 E6DB74 5c98cd ca94ff f8f8f2 72C05D f8f8f2 66D9EF 66D9EF f8f8f2'],
  material: ['#263238', 'e9eded c792ea C3E88D 546E7A F77669 80CBAE e9eded 82B1FF FFCB6B e9eded 80CBC4'],
  monokai: ['#272822', 'f8f8f2 f92672 e6db74 75715e ae81ff a6e22e fd971f f8f8f2 a6e22e fff 555'],
  'night-owl': ['#011627', 'abb2bf c792ea ecc48d 5c6370 F78C6C fff 82AAFF 82AAFF F78C6C c792ea 7fdbca'],
  nord: ['#2e3440', 'd8dee9 81A1C1 A3BE8C 4C566A B48EAD D8DEE9 D8DEE9 88C0D0 8FBCBB 81A1C1 81A1C1'],
  'oceanic-next': ['#304148', 'f8f8f2 C594C5 99C794 65737E F99157 99C794 6699CC f8f8f2 C594C5 fff 555'],
  'one-light': ['#fafafa', '383a42 a626a4 50a14f a0a1a7 986801 4078f2 4078f2 e06c75 d19a66 0184bc 383a42', 'light'],
  'one-dark': ['#282c34', 'abb2bf c678dd 98c379 5c6370 d19a66 56b6c2 e5c07b e06c75 d19a66 56b6c2 abb2bf'],
  'panda-syntax': ['#292A2B', 'E6E6E6 FF75B5 19F9D8 676B79 FFB86C f3f3f3 e6e6e6 ffb86c ffb86c f3f3f3 b084eb'],
  'paraiso-dark': ['#2f1e2e', 'b9b6b0 ef6155 fec418 e96ba8 815ba4 48b685 f99b15 48b685 48b685 fff 555'],
  seti: ['#151718', 'CFD2D1 e6cd69 55b5db 41535b cd3f45 a074c4 55b5db 55b5db 9fca56 9fca56 55b5db'],
  'shades-of-purple': ['#2D2B55', 'FFFFFF FF9D00 A5FF90 B362FF FF628C FAD000 9EFFFF 9EFFFF 9EFFFF FF9D00 FF9D00'],
  'solarized dark': ['#002b36', '839496 cb4b16 859900 586e75 d33682 2aa198 2aa198 839496 2aa198 6c71c4 859900'],
  'solarized light': ['#fdf6e3', '657b83 cb4b16 859900 586e75 d33682 2aa198 2aa198 839496 2aa198 6c71c4 859900', 'light'],
  'synthwave-84': ['#2b213a', 'b6b1b1 f4eee4 ff8b39 6d77b3 f97e72 fdfdfd fdfdfd f92aad fff5f6 f4eee4 ff8b39'],
  twilight: ['#141414', 'f7f7f7 f9ee98 8f9d6a 777 ca7841 fff 607392 607392 d6bb6d cda869 f7f7f7'],
  verminal: ['rgba(0, 0, 0, 0.85)', 'fff 9AE1FF 98c379 5c6370 d19a66 0af 34B7FF ff9ba3 d19a66 FA78C3 abb2bf'],
  vscode: ['#1E1E1E', 'D4D4D4 C586C0 CE9178 6A9955 B5CEA8 DCDCAA DCDCAA 9CDCFE d19a66 D4D4D4 D4D4D4'],
  yeti: ['#ECEAE8', 'd1c9c0 9fb96e 96c0d8 d4c8be a074c4 a074c4 55b5db 55b5db 9fb96e 9fb96e 96c0d8', 'light'],
  zenburn: ['#3f3f3f', 'dcdccc f0dfaf cc9393 7f9f7f dcdccc dfaf8f dcdccc dfaf8f dfaf8f f0efd0 f0dfaf'],
}

function palette(colors: string): Palette {
  const [text, keyword, string, comment, number, property, definition, variable, attribute, operator, meta] = colors.split(' ').map((c) => '#' + c)
  return {
    foreground: text,
    keyword,
    string,
    stringExpression: string,
    comment,
    number,
    property,
    function: definition,
    parameter: variable,
    constant: attribute,
    punctuation: operator,
    link: meta,
  }
}

export const CARBON_PALETTES: Record<CarbonTheme, CarbonPalette> = Object.fromEntries(
  Object.entries(ROWS).map(([name, [background, colors, light]]) => [name, { background, light: light === 'light', palette: palette(colors) }]),
) as Record<CarbonTheme, CarbonPalette>
