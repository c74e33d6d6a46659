"""Hypothesis strategies that invent GSD / Legion planning phases, with the truth recorded.

`phase_specs()` draws a `PhaseSpec` (frozen, pure data); `write_phase(spec, root)` writes the
project under `root` and returns a `GeneratedPhase` whose truth comes from how the files were
built, never from parsing them. The module is written apart from the product: it imports nothing
from `legion_llm`, only the standard library and hypothesis. All variation is drawn by hypothesis;
the writer is a pure function of the spec (the same spec writes the same bytes).

Dimensions spanned (each drawn independently and combined freely):

Layout
- container: `.planning/phases/NN-slug/`, milestone archives
  `.planning/milestones/vX.Y-phases/NN-slug/` (beside `milestones/vX.Y-ROADMAP.md`), Legion's
  `.planning/archive/NN-slug/`
- phase numbers: integers 0..120 (`00`, `07`, `23`, `100`), decimal `06.1`, `12.3.1`
- folder prefixes before the number (`CTRX-23-pyinstaller`, `app-07-auth`); ASCII or Unicode slugs
- summary names `NN-MM-SUMMARY.md`, without the phase prefix (`01-SUMMARY.md` in phase 05), or the
  one-plan `NN-SUMMARY.md`; letter-suffixed plans `02-01a`
- PLAN names `NN-MM-PLAN.md`, `NN-PLAN-MM.md`, both at once, `MM-PLAN.md`, `NN-PLAN.md`, or none;
  a PLAN whose plan has no SUMMARY (a gap)
- a sibling phase folder with the same number: in another milestone, in the current `phases/`, or
  next to ours in the same `phases/`; other phases of the ROADMAP, some with folders
- the ROADMAP lists the phase or does not list it at all
- distractor files in the folder: CONTEXT, RESEARCH, VERIFICATION, VALIDATION, UAT, REVIEW,
  `PLANNING-SUMMARY.md`, `NN-CLOSEOUT-SUMMARY.md`, `NN-MM-VERIFICATION.md`, `deferred-items.md`,
  `.gitkeep`, a sub-folder of evidence; they mention ids, decoys and paths too

Requirement ids
- shapes: `AUTH-01`, `UX-STATES`, `MED-EVENT`, `D-04`, `REQ-sizes-five`, `V16-AI-01`,
  `PHASE-34-D-A1`, `LOG-01-phase-local`, `R1`, `R1.2`, `FR1.1`, `NFR1`, `SYNC_05`, `04.2-K1`,
  `KB-PKG-01`, `I18N-02`, and random ones of letters, digits, `-`, `_`, `.`
- declared by: summary frontmatter (`requirements-completed`, `requirements_completed`,
  `requirements`, `requirements-addressed`, `requirements_fulfilled`; flow, block, quoted, with
  `# comments`), PLAN frontmatter (`requirements`, `requirements_addressed`), the ROADMAP phase
  entry (GSD details, Legion details, blockquote, nested under the checklist line), body
  `**Requirements:**` lines, `## Requirements Covered` sections (bullets or a table), and
  REQUIREMENTS.md (top level or a milestone copy) traceability rows that map to this phase the ids
  a summary mentions only in prose or in a translated section (a definition alone declares
  nothing)
- reported in prose with status words (done or partial) in every prose language; plans with
  `Failed` / `Partial` / `Complete with Warnings` status
- decoys in prose, decision lists and tables, deviations, verification lines, PLAN bodies, the
  ROADMAP goal, REQUIREMENTS.md and distractor files: screen codes `Dashboard (S-06)`, patterns
  `follows DEC-041`, standards `ISO-8601` `UTF-8` `SHA-256`, decision ids `D-12`, tickets
  `OPS-4411`, threat ids `T-03-02`, `CVE-2024-3094`, compiler codes `TS2345`, error codes
  `ERR-042`, the word `TBD`
- foreign ids: other phases' requirements in the ROADMAP, REQUIREMENTS.md and sibling folders

File lists
- frontmatter `key-files` / `key_files` / `keyFiles` with `created` / `modified` (flow or block),
  flat `files_modified` / `files-modified` / `files_changed` / `files`; entries with notes
  (`— note`, `(new)`, quoted `"path (new)"`, `# comment`)
- body sections `## Files Created/Modified`, `## Files Modified`, `## Files`, `## Key Files`, ...
  and headings in Spanish, Portuguese, French, German, Swedish, Russian, Chinese, Japanese,
  Korean and Vietnamese; bullets of eight shapes, numbered bold entries, tables (translated
  headers), `**Created:** `path`` lines, fenced blocks of bare paths
- path shapes: ordinary nested files, dotfiles, several extensions, no extension, lock files,
  bundle folders, route templates (`[slug]`, `(auth)`, `{id}`, `[...rest]`, `+page`, `@modal`),
  globs (also brace globs with a comma), Unicode folders (also NFD-decomposed), spaces, absolute
  and home paths, `$` `#` `@` in names, very deep paths, the same file name in two folders, a nested
  path with its own bare file name; the same path in several lists and summaries

Prose and the rest
- summary styles: GSD, Legion, free-form, a one-line summary; with full, compact or no
  frontmatter; the status as `**Status:**`, `**Status**:`, `## Status:`, a blockquote, with
  trailing spaces, a frontmatter `status:`, or absent; decisions as frontmatter strings, frontmatter
  dicts with ids, body bullets or a `| Decision | Rationale |` table; deviations, issues,
  verification (`Self-Check: PASSED`, `4/4 checks passed`, command tables with `\\|`)
- prose in English, Spanish, Portuguese, French, German, Swedish, Russian, Chinese, Japanese,
  Korean and Vietnamese; headings translated or left in English
- sizes from a title and one sentence to about 20 KB; 1 to 8 plans; CRLF files; a UTF-8 BOM
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from hypothesis import strategies as st

# ---------------------------------------------------------------------------------------------
# Vocabulary: every word here is invented for this generator.
# ---------------------------------------------------------------------------------------------

LANGUAGES: tuple[str, ...] = ("en", "es", "pt", "fr", "de", "sv", "ru", "zh", "ja", "ko", "vi")


@dataclass(frozen=True)
class Language:
    """Headings, phrases and words of one prose language."""

    files_headings: tuple[str, ...]
    table: tuple[str, str]
    decision_table: tuple[str, str]
    because: str
    accomplishments: str
    decisions: str
    deviations: str
    issues: str
    verification: str
    built: str
    covered: str
    tasks: str
    details: str
    none: str
    goal: str
    things: tuple[str, ...]
    deliver: tuple[str, ...]
    path_prose: tuple[str, ...]
    decide: tuple[str, ...]
    deviate: tuple[str, ...]
    verify: tuple[str, ...]
    done: tuple[str, ...]
    partial: tuple[str, ...]
    notes: tuple[str, ...]
    name_words: tuple[str, ...]
    screen: str
    pattern: str
    generic: str


EN = Language(
    files_headings=(
        "Files Created/Modified",
        "Files Modified",
        "Files",
        "Key Files",
        "Files Created / Modified",
        "Files Changed",
        "Files Created",
        "Key files created/modified",
    ),
    table=("File", "Change"),
    decision_table=("Decision", "Rationale"),
    because="keeps the change small",
    accomplishments="Accomplishments",
    decisions="Decisions Made",
    deviations="Deviations from Plan",
    issues="Issues Encountered",
    verification="Verification",
    built="What Was Built",
    covered="Requirements Covered",
    tasks="Task Commits",
    details="Details",
    none="None.",
    goal="Goal",
    things=(
        "the retry policy",
        "the session store",
        "the export pipeline",
        "the settings screen",
        "the webhook handler",
        "the migration runner",
        "the search index",
        "the audit trail",
        "the onboarding flow",
        "the cache layer",
        "the command-line entry point",
        "the billing adapter",
    ),
    deliver=(
        "Added {thing} with input validation and clear error messages.",
        "Reworked {thing} so it no longer blocks the main thread.",
        "Wired {thing} into the existing router and covered it with tests.",
        "Replaced the ad hoc version of {thing} with one shared helper.",
        "Documented {thing} so the next phase can build on it.",
        "Split {thing} into smaller modules with one job each.",
    ),
    path_prose=(
        "The main change lives in `{path}`.",
        "Most of the logic ended up in {path} after the review.",
        "See `{path}` for the entry point.",
        "`{path}` now owns the defaults.",
        "A later phase may need to touch {path} as well.",
    ),
    decide=(
        "Kept {thing} synchronous because it has few callers.",
        "Chose a plain file over a database for {thing}.",
        "Deferred caching in {thing} until measurements justify it.",
        "Moved {thing} behind a feature flag.",
    ),
    deviate=(
        "Renamed one helper to match the naming used elsewhere.",
        "Added a missing test fixture found during verification.",
        "Merged two small tasks because they touched the same code.",
    ),
    verify=("{n}/{n} checks passed", "All {n} tests pass", "Lint and type checks are clean"),
    done=(
        "This closes {id}.",
        "{id} satisfied.",
        "Requirement {id} is now met.",
        "Covers {id} end to end.",
    ),
    partial=(
        "{id} partially done: the happy path works but retries are missing.",
        "{id} is only partly met.",
        "{id} remains open until the follow-up lands.",
    ),
    notes=(
        "new",
        "updated",
        "parser",
        "entry point",
        "tests",
        "defaults moved here",
        "rewritten",
        "~120 lines",
    ),
    name_words=(
        "Auth",
        "Export",
        "Sync",
        "Search",
        "Billing",
        "Onboarding",
        "Packaging",
        "Reports",
        "Notifications",
        "Settings",
        "Telemetry",
        "Import",
    ),
    screen="The {screen} screen ({tok}) shows the new state.",
    pattern="The approach follows {tok} from an earlier phase.",
    generic="Background for this is in {tok}.",
)

ES = Language(
    files_headings=("Archivos creados", "Archivos modificados", "Archivos creados/modificados"),
    table=("Archivo", "Cambio"),
    decision_table=("Decisión", "Motivo"),
    because="mantiene el cambio acotado",
    accomplishments="Logros",
    decisions="Decisiones tomadas",
    deviations="Desviaciones del plan",
    issues="Problemas encontrados",
    verification="Verificación",
    built="Qué se construyó",
    covered="Requisitos cubiertos",
    tasks="Tareas completadas",
    details="Detalles",
    none="Ninguno.",
    goal="Objetivo",
    things=(
        "la política de reintentos",
        "el almacén de sesiones",
        "la exportación de informes",
        "la pantalla de ajustes",
        "el receptor de eventos",
        "el índice de búsqueda",
    ),
    deliver=(
        "Se añadió {thing} con validación de entrada.",
        "Se reescribió {thing} para que no bloquee la interfaz.",
        "Se conectó {thing} con el enrutador existente y se cubrió con pruebas.",
        "Se documentó {thing} para la siguiente fase.",
    ),
    path_prose=(
        "El cambio principal está en `{path}`.",
        "Casi toda la lógica quedó en {path} tras la revisión.",
        "Ver `{path}` para el punto de entrada.",
    ),
    decide=(
        "Se mantuvo {thing} síncrono porque tiene pocos usuarios.",
        "Se eligió un archivo plano para {thing} en lugar de una base de datos.",
    ),
    deviate=("Se renombró una función auxiliar para seguir la convención del proyecto.",),
    verify=("{n}/{n} comprobaciones superadas", "Las {n} pruebas pasan"),
    done=("Esto cierra {id}.", "{id} cumplido.", "El requisito {id} queda satisfecho."),
    partial=("{id} cumplido a medias.", "{id} sigue abierto hasta la próxima entrega."),
    notes=("nuevo", "actualizado", "pruebas", "punto de entrada"),
    name_words=("Autenticación", "Exportación", "Búsqueda", "Facturación", "Ajustes", "Informes"),
    screen="La pantalla {screen} ({tok}) muestra el nuevo estado.",
    pattern="El enfoque sigue {tok} de una fase anterior.",
    generic="El contexto está en {tok}.",
)

PT = Language(
    files_headings=("Arquivos modificados", "Arquivos criados", "Arquivos criados/modificados"),
    table=("Arquivo", "Mudança"),
    decision_table=("Decisão", "Justificativa"),
    because="mantém a mudança pequena",
    accomplishments="Realizações",
    decisions="Decisões",
    deviations="Desvios do plano",
    issues="Problemas encontrados",
    verification="Verificação",
    built="O que foi construído",
    covered="Requisitos atendidos",
    tasks="Tarefas concluídas",
    details="Detalhes",
    none="Nenhum.",
    goal="Objetivo",
    things=(
        "a fila de processamento",
        "o cadastro de clientes",
        "a tela de configurações",
        "o relatório mensal",
        "a sincronização de agenda",
    ),
    deliver=(
        "Foi criada {thing} com validação dos dados de entrada.",
        "Refatoramos {thing} para separar leitura e escrita.",
        "Integramos {thing} ao fluxo existente com testes.",
    ),
    path_prose=(
        "A mudança principal está em `{path}`.",
        "Quase toda a lógica ficou em {path}.",
        "Veja `{path}` para o ponto de entrada.",
    ),
    decide=(
        "Mantivemos {thing} simples porque há poucos usuários.",
        "Adiamos o cache de {thing} até haver medições.",
    ),
    deviate=("Um teste faltante foi adicionado durante a verificação.",),
    verify=("{n}/{n} verificações aprovadas", "Os {n} testes passam"),
    done=("Isto fecha {id}.", "{id} atendido.", "O requisito {id} está cumprido."),
    partial=("{id} parcialmente atendido.", "{id} continua em aberto."),
    notes=("novo", "atualizado", "testes", "ponto de entrada"),
    name_words=("Fundação", "Cadastro", "Agenda", "Relatórios", "Pagamentos", "Painel"),
    screen="A tela {screen} ({tok}) mostra o novo estado.",
    pattern="A abordagem segue {tok} de uma fase anterior.",
    generic="O contexto está em {tok}.",
)

FR = Language(
    files_headings=("Fichiers modifiés", "Fichiers créés", "Fichiers créés/modifiés"),
    table=("Fichier", "Modification"),
    decision_table=("Décision", "Justification"),
    because="garde le changement limité",
    accomplishments="Réalisations",
    decisions="Décisions",
    deviations="Écarts par rapport au plan",
    issues="Problèmes rencontrés",
    verification="Vérification",
    built="Ce qui a été construit",
    covered="Exigences couvertes",
    tasks="Tâches terminées",
    details="Détails",
    none="Aucun.",
    goal="Objectif",
    things=(
        "le panneau d'administration",
        "la saisie des quittances",
        "le calendrier partagé",
        "la politique de relance",
        "l'export comptable",
    ),
    deliver=(
        "Ajout de {thing} avec une validation des champs.",
        "Refonte de {thing} pour ne plus bloquer l'interface.",
        "Branchement de {thing} sur le routeur existant, avec des tests.",
    ),
    path_prose=(
        "Le changement principal se trouve dans `{path}`.",
        "L'essentiel de la logique est dans {path}.",
        "Voir `{path}` pour le point d'entrée.",
    ),
    decide=(
        "{thing} reste synchrone car il a peu d'appelants.",
        "Un simple fichier suffit pour {thing} à ce stade.",
    ),
    deviate=("Une fonction utilitaire a été renommée pour suivre les conventions.",),
    verify=("{n}/{n} vérifications réussies", "Les {n} tests passent"),
    done=("Cela clôt {id}.", "{id} satisfaite.", "L'exigence {id} est remplie."),
    partial=("{id} partiellement réalisée.", "{id} reste ouverte."),
    notes=("nouveau", "mis à jour", "tests", "point d'entrée"),
    name_words=("Saisie", "Administration", "Calendrier", "Relances", "Quittances", "Export"),
    screen="L'écran {screen} ({tok}) affiche le nouvel état.",
    pattern="L'approche suit {tok} d'une phase précédente.",
    generic="Le contexte se trouve dans {tok}.",
)

DE = Language(
    files_headings=("Geänderte Dateien", "Erstellte Dateien", "Erstellte und geänderte Dateien"),
    table=("Datei", "Änderung"),
    decision_table=("Entscheidung", "Begründung"),
    because="hält die Änderung klein",
    accomplishments="Ergebnisse",
    decisions="Entscheidungen",
    deviations="Abweichungen vom Plan",
    issues="Aufgetretene Probleme",
    verification="Verifikation",
    built="Was gebaut wurde",
    covered="Abgedeckte Anforderungen",
    tasks="Erledigte Aufgaben",
    details="Einzelheiten",
    none="Keine.",
    goal="Ziel",
    things=(
        "der Prozessbaum",
        "die Indexierung",
        "der Kalenderabgleich",
        "die Wiederholungslogik",
        "das Rechteprüfmodul",
    ),
    deliver=(
        "{thing} wurde mit Eingabeprüfung ergänzt.",
        "{thing} blockiert die Oberfläche nicht mehr.",
        "{thing} ist an den bestehenden Router angebunden und getestet.",
    ),
    path_prose=(
        "Die Hauptänderung liegt in `{path}`.",
        "Der Großteil der Logik steckt jetzt in {path}.",
        "Der Einstiegspunkt ist `{path}`.",
    ),
    decide=(
        "{thing} bleibt synchron, weil es nur wenige Aufrufer gibt.",
        "Für {thing} genügt vorerst eine einfache Datei.",
    ),
    deviate=("Eine Hilfsfunktion wurde umbenannt, damit sie zur Namensgebung passt.",),
    verify=("{n}/{n} Prüfungen bestanden", "Alle {n} Tests laufen durch"),
    done=("Damit ist {id} erfüllt.", "{id} erledigt.", "Die Anforderung {id} ist umgesetzt."),
    partial=("{id} nur teilweise umgesetzt.", "{id} bleibt offen."),
    notes=("neu", "angepasst", "Tests", "Einstiegspunkt"),
    name_words=("Indexierung", "Kalender", "Integrationsbeweis", "Freigabe", "Abgleich", "Suche"),
    screen="Die Ansicht {screen} ({tok}) zeigt den neuen Zustand.",
    pattern="Der Ansatz folgt {tok} aus einer früheren Phase.",
    generic="Der Hintergrund steht in {tok}.",
)

SV = Language(
    files_headings=("Ändrade filer", "Skapade filer"),
    table=("Fil", "Ändring"),
    decision_table=("Beslut", "Motivering"),
    because="håller ändringen liten",
    accomplishments="Resultat",
    decisions="Beslut",
    deviations="Avvikelser från planen",
    issues="Problem",
    verification="Verifiering",
    built="Vad som byggdes",
    covered="Täckta krav",
    tasks="Slutförda uppgifter",
    details="Detaljer",
    none="Inga.",
    goal="Mål",
    things=("bokningsflödet", "sökindexet", "exporten av rapporter", "inställningsvyn"),
    deliver=(
        "La till {thing} med validering av indata.",
        "Skrev om {thing} så att gränssnittet inte blockeras.",
        "Kopplade {thing} till den befintliga routern och skrev tester.",
    ),
    path_prose=(
        "Den största ändringen finns i `{path}`.",
        "Det mesta av logiken hamnade i {path}.",
    ),
    decide=("Behöll {thing} synkront eftersom det har få anropare.",),
    deviate=("En hjälpfunktion döptes om för att följa projektets namngivning.",),
    verify=("{n}/{n} kontroller godkända", "Alla {n} tester går igenom"),
    done=("Detta stänger {id}.", "{id} uppfyllt."),
    partial=("{id} delvis klart.", "{id} är fortfarande öppet."),
    notes=("ny", "uppdaterad", "tester"),
    name_words=("Bokning", "Sökning", "Rapporter", "Inställningar", "Export"),
    screen="Vyn {screen} ({tok}) visar det nya läget.",
    pattern="Upplägget följer {tok} från en tidigare fas.",
    generic="Bakgrunden finns i {tok}.",
)

RU = Language(
    files_headings=("Изменённые файлы", "Созданные файлы"),
    table=("Файл", "Изменение"),
    decision_table=("Решение", "Обоснование"),
    because="изменение остаётся небольшим",
    accomplishments="Достижения",
    decisions="Принятые решения",
    deviations="Отклонения от плана",
    issues="Возникшие проблемы",
    verification="Проверка",
    built="Что сделано",
    covered="Покрытые требования",
    tasks="Выполненные задачи",
    details="Подробности",
    none="Нет.",
    goal="Цель",
    things=("обработчик очереди", "модуль авторизации", "экспорт отчётов", "экран настроек"),
    deliver=(
        "Добавлен {thing} с проверкой входных данных.",
        "Переписан {thing}, чтобы он не блокировал интерфейс.",
        "Подключён {thing} к существующему маршрутизатору, написаны тесты.",
    ),
    path_prose=(
        "Основное изменение находится в `{path}`.",
        "Большая часть логики теперь в {path}.",
    ),
    decide=("Оставили {thing} синхронным: вызовов немного.",),
    deviate=("Переименована вспомогательная функция по соглашению проекта.",),
    verify=("{n}/{n} проверок пройдено", "Все {n} тестов проходят"),
    done=("Это закрывает {id}.", "{id} выполнено."),
    partial=("{id} выполнено частично.", "{id} остаётся открытым."),
    notes=("новый", "обновлён", "тесты"),
    name_words=("Авторизация", "Отчёты", "Очередь", "Настройки", "Поиск"),
    screen="Экран {screen} ({tok}) показывает новое состояние.",
    pattern="Подход повторяет {tok} из прошлой фазы.",
    generic="Подробности в {tok}.",
)

ZH = Language(
    files_headings=("修改的文件", "文件清单", "新建的文件"),
    table=("文件", "变更"),
    decision_table=("决策", "理由"),
    because="改动保持最小",
    accomplishments="完成内容",
    decisions="关键决策",
    deviations="与计划的偏差",
    issues="遇到的问题",
    verification="验证结果",
    built="构建内容",
    covered="覆盖的需求",
    tasks="已完成任务",
    details="细节",
    none="无。",
    goal="目标",
    things=("字段抽取流程", "上传页面", "任务轮询", "打包脚本", "知识库检索"),
    deliver=(
        "新增{thing}，并加入输入校验。",
        "重写{thing}，不再阻塞界面。",
        "将{thing}接入现有路由并补充测试。",
    ),
    path_prose=("主要改动在 `{path}` 中。", "大部分逻辑现在位于 {path}。"),
    decide=("{thing}保持同步实现，因为调用方很少。",),
    deviate=("按项目约定重命名了一个辅助函数。",),
    verify=("{n}/{n} 项检查通过", "全部 {n} 个测试通过"),
    done=("{id} 已完成。", "本计划满足 {id}。"),
    partial=("{id} 部分完成。", "{id} 仍未完成。"),
    notes=("新增", "更新", "测试"),
    name_words=("文档解析", "字段抽取", "打包", "知识库", "导出"),
    screen="{screen}页面（{tok}）显示新的状态。",
    pattern="做法沿用早期阶段的 {tok}。",
    generic="背景见 {tok}。",
)

JA = Language(
    files_headings=("変更したファイル", "作成したファイル"),
    table=("ファイル", "変更内容"),
    decision_table=("決定", "理由"),
    because="変更を小さく保てる",
    accomplishments="成果",
    decisions="決定事項",
    deviations="計画からの逸脱",
    issues="発生した問題",
    verification="検証",
    built="実装内容",
    covered="対応した要件",
    tasks="完了したタスク",
    details="詳細",
    none="なし。",
    goal="目標",
    things=("再試行ポリシー", "セッション管理", "検索インデックス", "設定画面"),
    deliver=(
        "{thing}を追加し、入力チェックを入れた。",
        "{thing}を書き直し、画面が固まらないようにした。",
        "{thing}を既存のルーターに接続し、テストを書いた。",
    ),
    path_prose=("主な変更は `{path}` にある。", "ロジックの大半は {path} に移った。"),
    decide=("{thing}は呼び出し元が少ないため同期のままにした。",),
    deviate=("命名規則に合わせて補助関数の名前を変えた。",),
    verify=("{n}/{n} 件のチェックに合格", "{n} 件のテストがすべて成功"),
    done=("{id} を満たした。", "これで {id} は完了。"),
    partial=("{id} は一部のみ完了。", "{id} は未完了のまま。"),
    notes=("新規", "更新", "テスト"),
    name_words=("認証", "検索", "設定", "通知", "書き出し"),
    screen="{screen}画面（{tok}）に新しい状態が表示される。",
    pattern="この方式は以前のフェーズの {tok} に倣う。",
    generic="経緯は {tok} を参照。",
)

KO = Language(
    files_headings=("수정된 파일", "생성된 파일"),
    table=("파일", "변경"),
    decision_table=("결정", "근거"),
    because="변경을 작게 유지한다",
    accomplishments="성과",
    decisions="결정 사항",
    deviations="계획 대비 변경",
    issues="발생한 문제",
    verification="검증",
    built="구현 내용",
    covered="충족된 요구사항",
    tasks="완료된 작업",
    details="세부 사항",
    none="없음.",
    goal="목표",
    things=("초안 작성 흐름", "재시도 정책", "검색 색인", "설정 화면"),
    deliver=(
        "{thing}을 추가하고 입력 검증을 넣었다.",
        "{thing}을 다시 작성해 화면이 멈추지 않게 했다.",
        "{thing}을 기존 라우터에 연결하고 테스트를 작성했다.",
    ),
    path_prose=("주요 변경은 `{path}`에 있다.", "대부분의 로직은 이제 {path}에 있다."),
    decide=("{thing}은 호출하는 곳이 적어 동기 방식으로 두었다.",),
    deviate=("프로젝트 규칙에 맞게 보조 함수 이름을 바꿨다.",),
    verify=("{n}/{n} 검사 통과", "{n}개 테스트 모두 통과"),
    done=("{id} 충족.", "이로써 {id} 완료."),
    partial=("{id} 일부만 완료.", "{id}는 아직 열려 있다."),
    notes=("신규", "수정", "테스트"),
    name_words=("초안", "작성", "검색", "설정", "알림"),
    screen="{screen} 화면({tok})에 새 상태가 표시된다.",
    pattern="이 방식은 이전 단계의 {tok}를 따른다.",
    generic="배경은 {tok} 참고.",
)

VI = Language(
    files_headings=("Tệp đã thay đổi", "Tệp đã tạo"),
    table=("Tệp", "Thay đổi"),
    decision_table=("Quyết định", "Lý do"),
    because="giữ thay đổi nhỏ gọn",
    accomplishments="Kết quả",
    decisions="Quyết định",
    deviations="Sai lệch so với kế hoạch",
    issues="Vấn đề gặp phải",
    verification="Kiểm tra",
    built="Những gì đã xây dựng",
    covered="Yêu cầu đã đáp ứng",
    tasks="Nhiệm vụ đã hoàn thành",
    details="Chi tiết",
    none="Không có.",
    goal="Mục tiêu",
    things=("trình chỉnh sửa phụ đề", "hàng đợi xuất video", "màn hình cài đặt", "bộ nhận dạng"),
    deliver=(
        "Đã thêm {thing} kèm kiểm tra dữ liệu đầu vào.",
        "Viết lại {thing} để giao diện không bị treo.",
        "Nối {thing} vào bộ định tuyến hiện có và viết kiểm thử.",
    ),
    path_prose=("Thay đổi chính nằm trong `{path}`.", "Phần lớn logic giờ ở {path}."),
    decide=("Giữ {thing} đồng bộ vì ít nơi gọi tới.",),
    deviate=("Đổi tên một hàm phụ cho đúng quy ước của dự án.",),
    verify=("{n}/{n} kiểm tra đạt", "Cả {n} bài kiểm thử đều qua"),
    done=("Việc này hoàn tất {id}.", "{id} đã đáp ứng."),
    partial=("{id} mới xong một phần.", "{id} vẫn còn mở."),
    notes=("mới", "cập nhật", "kiểm thử"),
    name_words=("Phụ đề", "Xuất video", "Cài đặt", "Nhận dạng", "Lồng tiếng"),
    screen="Màn hình {screen} ({tok}) hiển thị trạng thái mới.",
    pattern="Cách làm theo {tok} từ giai đoạn trước.",
    generic="Bối cảnh nằm ở {tok}.",
)

LANG: dict[str, Language] = {
    "en": EN,
    "es": ES,
    "pt": PT,
    "fr": FR,
    "de": DE,
    "sv": SV,
    "ru": RU,
    "zh": ZH,
    "ja": JA,
    "ko": KO,
    "vi": VI,
}

SCREENS = ("Dashboard", "Checkout", "Login", "Profile", "Inbox", "Reports")
STANDARDS = (
    ("ISO-8601", "Dates are stored as {tok} strings."),
    ("UTF-8", "Files are read as {tok} with a fallback for legacy input."),
    ("SHA-256", "Checksums use {tok}."),
    ("AES-256", "Secrets at rest use {tok}."),
    ("RFC-3339", "Timestamps follow {tok}."),
    ("ISO-4217", "Currency codes follow {tok}."),
    ("UTF-16", "The native dialog expects {tok} strings."),
    ("SHA-1", "Object ids from the version store are {tok} hashes."),
    ("CP-1252", "Legacy exports are {tok} encoded."),
    ("IEEE-754", "Amounts avoid {tok} rounding by using integer cents."),
)
TICKET_PROJECTS = ("OPS", "GH", "LIN", "SUP", "JIRA", "BUG")
PROJECTS = ("Larkspur", "tidewater", "Quokka Ledger", "Marlow Desk", "pebblebox", "Ostrakon")
SUBSYSTEMS = ("api", "ui", "infra", "data", "cli", "auth", "export", "packaging")
AGENTS = ("engineering-backend", "engineering-frontend", "testing-qa", "devops-automator")
TASK_VERBS = ("Add", "Wire", "Refactor", "Test", "Document", "Harden", "Migrate", "Extract")
TASK_OBJECTS = (
    "request validation",
    "the retry loop",
    "settings persistence",
    "error mapping",
    "the export writer",
    "fixture loading",
    "the status badge",
    "background sync",
)

# Path vocabulary ------------------------------------------------------------------------------

PATH_ROOTS = (
    "src",
    "lib",
    "app",
    "internal/hltv",
    "pkg/store",
    "backend/app",
    "frontend/src",
    "packages/core/src",
    "apps/web/src",
    "cmd/server",
    "crates/engine/src",
    "tests",
    "docs",
    "scripts",
    "migrations",
    "electron",
    "speaker-service/src",
)
PATH_SUBS = (
    "components",
    "services",
    "routes",
    "models",
    "utils",
    "hooks",
    "handlers",
    "store",
    "api",
    "config",
    "parser",
    "export",
    "auth",
    "jobs",
)
PATH_NAMES = (
    "parser",
    "client",
    "index",
    "main",
    "session",
    "router",
    "schema",
    "batch_renderer",
    "TilesetPanel",
    "useAuth",
    "retry_policy",
    "settings",
    "format",
    "errors",
    "webhooks",
    "ledger",
)
PATH_EXTS = (
    ".ts",
    ".tsx",
    ".py",
    ".go",
    ".rs",
    ".swift",
    ".kt",
    ".vue",
    ".svelte",
    ".css",
    ".sql",
    ".md",
    ".json",
    ".yaml",
    ".toml",
    ".sh",
)
DOTFILES = (
    ".env.example",
    ".github/workflows/ci.yml",
    ".eslintrc.cjs",
    "backend/.dockerignore",
    ".gitattributes",
    ".github/dependabot.yml",
    ".vscode/settings.json",
    ".prettierrc",
)
MULTI_EXT = (
    "config.yml.example",
    "src/app.test.ts",
    "dist/bundle.tar.gz",
    "types/index.d.ts",
    "tests/parser.spec.tsx",
    "settings.local.json.template",
)
NO_EXT = ("Makefile", "bin/run", "scripts/deploy", "Dockerfile", "backend/Dockerfile", "LICENSE")
LOCKS = ("go.sum", "Cargo.lock", "yarn.lock", "uv.lock", "package-lock.json", "poetry.lock")
BUNDLES = (
    "App.xcodeproj/project.pbxproj",
    "Foo.app/Contents/Info.plist",
    "Resources.bundle/en.lproj/Localizable.strings",
    "ios/Runner.xcworkspace/contents.xcworkspacedata",
)
TEMPLATES = (
    "data/pdfs/{poliza_id}.pdf",
    "src/app/[slug]/page.tsx",
    "app/(auth)/login/page.tsx",
    "src/routes/[...rest].ts",
    "pages/blog/[[...slug]].tsx",
    "src/routes/+page.svelte",
    "src/routes/items/[id]/+page.server.ts",
    "app/@modal/(.)photo/[id]/page.tsx",
    "reports/{year}/{month}.csv",
    "src/app/(marketing)/[locale]/page.tsx",
)
GLOBS = (
    "tests/fixtures/*.json",
    "src-tauri/icons/*.png",
    "docs/**/*.md",
    "migrations/*.sql",
    "packages/{core,content}/index.ts",
)
UNICODE_PATHS = (
    "docs/説明/readme.md",
    "src/компоненты/Кнопка.tsx",
    "assets/ñandú.png",
    "文档/设计说明.md",
    "src/페이지/홈.tsx",
    "docs/guía-rápida.md",
    "ressources/modèles/facture.html",
    "skripte/größe_prüfen.py",
    "tài-liệu/hướng-dẫn.md",
)
SPACED = ("docs/User Guide.md", "assets/App Icon.png", "notes/release notes.txt")
ABSOLUTE = ("/etc/nginx/conf.d/app.conf", "/usr/local/bin/backup.sh", "~/.config/tool/config.toml")
ODD = (
    "src/lib/$types.ts",
    "docs/c#-interop.md",
    "src/@types/env.d.ts",
    "@scope/ui/index.ts",
    "src/pkg/__init__.py",
    "*.config.js",
)
DEEP = (
    "packages/server/src/modules/billing/adapters/stripe/webhooks/handlers/invoice_paid.ts",
    "services/ingest/internal/pipeline/stages/normalise/unicode/width/table_test.go",
)

PATH_SHAPES: tuple[str, ...] = (
    "ordinary",
    "dotfile",
    "multi-ext",
    "no-ext",
    "lock",
    "bundle",
    "template",
    "glob",
    "unicode",
    "unicode-nfd",
    "spaced",
    "absolute",
    "odd",
    "deep",
)

# Id vocabulary --------------------------------------------------------------------------------

ID_PREFIXES = (
    "AUTH",
    "UX",
    "SYNC",
    "API",
    "DATA",
    "UI",
    "PERF",
    "SEC",
    "OBS",
    "CLI",
    "DOC",
    "TEST",
    "INFRA",
    "PKG",
    "MIG",
    "NOTIF",
    "BILL",
    "SRCH",
    "I18N",
    "A11Y",
    "OAUTH2",
    "KB-PKG",
    "M3-VS",
    "L9I",
)
ID_WORDS = ("STATES", "EVENT", "EXPORT", "OFFLINE", "AUDIT", "RETRY", "LOCALE", "THEME")
LOWER_WORDS = ("sizes", "five", "plain", "local", "tiny", "merge", "draft", "gate")
ID_SHAPES: tuple[str, ...] = (
    "prefix-number",
    "prefix-word",
    "decision",
    "req-lower",
    "versioned",
    "phase-decision",
    "phase-local",
    "r",
    "r-dotted",
    "fr-dotted",
    "nfr",
    "underscore",
    "decimal-k",
    "random",
)
DECOY_KINDS: tuple[str, ...] = (
    "screen",
    "pattern",
    "standard",
    "decision",
    "ticket",
    "threat",
    "cve",
    "compiler",
    "error-code",
)

# ---------------------------------------------------------------------------------------------
# The spec: pure data, no files.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutSpec:
    """Where the phase folder lives and how its files are named."""

    container: str  # phases | milestone | archive
    milestone: str  # our milestone (container milestone), e.g. "v1.0"
    other_milestone: str  # the sibling's milestone when it lives in another archive
    current_milestone: str  # the milestone of the live ROADMAP
    folder_prefix: str  # "", "CTRX-", "app-"
    phase_number: str  # "23", "6.1", "12.3.1"
    roadmap_number_padded: bool  # "Phase 06.1" rather than "Phase 6.1"
    unicode_slug: bool
    summary_naming: str  # phase-plan | plan-only | single
    plan_naming: str  # phase-plan | plan-after | both | plan-only | single | none
    letter_suffix: bool
    roadmap_lists_phase: bool
    sibling: str  # none | other-milestone | current-phases | same-folder
    evidence_folder: bool


@dataclass(frozen=True)
class PathEntry:
    """One entry of a declared file list: the path as written and how it is dressed."""

    path: str
    note_style: int  # index into the list kind's note styles
    note: str  # a short note drawn from the language's bank ("" = none)


@dataclass(frozen=True)
class FileList:
    """A declared file list in a summary."""

    kind: str  # fm-key-files | fm-flat | body-{bullets,table,lines,fenced,numbered}
    key: str  # frontmatter key or heading text
    style: str  # flow | block (frontmatter); bullet shape; table header language
    entries: tuple[PathEntry, ...]
    split: int  # the first `split` entries are "created", the rest "modified"


@dataclass(frozen=True)
class IdMention:
    """A declared requirement id written into a summary."""

    req_id: str
    channel: str  # fm | body-line | covered | prose
    tone: str  # done | partial
    seed: int


@dataclass(frozen=True)
class DecoyUse:
    """An id-shaped token that is not a requirement, and where it is written."""

    token: str
    kind: str
    where: str  # deliverables | decisions | deviations | verification | plan-body | goal | file
    seed: int


@dataclass(frozen=True)
class PlanSpec:
    """One plan: its SUMMARY (always) and PLAN file (per layout)."""

    plan_id: str  # "01", "01a", "" for the one-plan naming
    summary_name: str
    plan_files: tuple[str, ...]
    title: str
    style: str  # gsd | legion | freeform | tiny
    size: str  # tiny | small | medium | large
    language: str
    translate_headings: bool
    frontmatter: str  # full | compact | none
    status: str  # complete | partial | warnings | failed
    status_style: str
    req_key: str
    req_style: str  # flow | block | quoted | commented
    covered_style: str
    body_line_style: str
    decisions_style: str
    mentions: tuple[IdMention, ...]
    plan_file_ids: tuple[str, ...]
    plan_req_key: str
    plan_file_paths: tuple[str, ...]  # the PLAN's `files_modified`: some of the listed paths
    file_lists: tuple[FileList, ...]
    prose_paths: tuple[str, ...]
    decoys: tuple[DecoyUse, ...]
    n_tasks: int
    filler: int
    seed: int
    crlf: bool
    bom: bool


@dataclass(frozen=True)
class ForeignPhase:
    """Another phase of the project: its ROADMAP entry and maybe a folder of its own."""

    number: str
    name: str
    slug: str
    ids: tuple[str, ...]
    paths: tuple[str, ...]
    milestone: str
    folder: str  # "" = no folder, else the folder path relative to root
    same_number: bool


@dataclass(frozen=True)
class RoadmapSpec:
    style: str  # gsd | legion | blockquote | checklist
    label: str  # "**Requirements**:" | "**Requirements:**"
    own_ids: tuple[str, ...]
    annotations: tuple[str, ...]  # one per own id ("" = none)
    empty_marker: str  # when listed without ids: "TBD" | "" | "(housekeeping, no new ids)"
    decoys: tuple[DecoyUse, ...]
    crlf: bool
    seed: int


@dataclass(frozen=True)
class RequirementsDocSpec:
    location: str  # top | milestone
    own_ids: tuple[str, ...]
    style: str  # checkbox | bold | dash
    traceability: bool  # other phases' rows in the traceability table too
    traced: tuple[str, ...]  # own ids a traceability row maps to this phase: their declaration
    decoys: tuple[DecoyUse, ...]
    seed: int


@dataclass(frozen=True)
class DistractorSpec:
    name: str  # relative to the phase folder
    kind: str
    ids: tuple[str, ...]  # declared ids mentioned
    foreign_ids: tuple[str, ...]
    decoys: tuple[DecoyUse, ...]
    paths: tuple[str, ...]
    seed: int


@dataclass(frozen=True)
class PhaseSpec:
    """Everything `write_phase` needs; nothing else is random."""

    project: str
    layout: LayoutSpec
    language: str
    name: str
    slug: str
    plans: tuple[PlanSpec, ...]
    gap_plan_id: str  # "" = none; else a plan with PLAN files and no SUMMARY
    gap_plan_files: tuple[str, ...]
    gap_ids: tuple[str, ...]
    roadmap: RoadmapSpec
    requirements_doc: RequirementsDocSpec | None
    foreign: tuple[ForeignPhase, ...]
    distractors: tuple[DistractorSpec, ...]
    seed: int


@dataclass(frozen=True)
class GeneratedPhase:
    """The truth about a written phase, recorded from how it was built."""

    root: Path
    phase_dir: Path
    phase_arg: str
    phase_number: str
    summary_files: tuple[str, ...]
    non_summary_files: tuple[str, ...]
    declared_ids: frozenset[str]
    reported_ids: frozenset[str]
    decoy_ids: frozenset[str]
    listed_paths: tuple[str, ...]
    prose_only_paths: tuple[str, ...]
    originals_chars: int
    # Extra truth beyond the brief:
    passed_ids: frozenset[str]  # reported done, only in Complete plans, never as partial
    unfinished_ids: frozenset[str]  # every report is partial (or in a Failed plan)
    foreign_ids: frozenset[str]  # other phases' ids written in the project
    foreign_paths: tuple[str, ...]  # paths of other phases' summaries
    distractor_only_paths: tuple[str, ...]  # paths mentioned only in non-summary files
    written_files: tuple[str, ...]  # every file written, relative to root


# ---------------------------------------------------------------------------------------------
# Small text helpers.
# ---------------------------------------------------------------------------------------------


def pick(bank: Sequence[str], seed: int, index: int = 0) -> str:
    """A deterministic choice from a bank: the seed was drawn by hypothesis."""
    return bank[(seed + index * 7919) % len(bank)]


def date_from(seed: int, offset: int = 0) -> str:
    day = (seed + offset) % 28 + 1
    month = (seed // 28 + offset // 28) % 12 + 1
    return f"2026-{month:02d}-{day:02d}"


def commit_hash(seed: int, index: int) -> str:
    return format((seed * 2654435761 + index * 40503 + 12345) % (16**7), "07x")


_ID_BEFORE = r"(?<![A-Za-z0-9_])(?<![A-Za-z0-9_][.\-])"
_ID_AFTER = r"(?![A-Za-z0-9_])(?![.\-][A-Za-z0-9_])"


def occurs_as_id(token: str, text: str) -> bool:
    """Whether `token` appears in `text` as a whole id (not inside a longer id)."""
    return re.search(_ID_BEFORE + re.escape(token) + _ID_AFTER, text) is not None


def related(a: str, b: str) -> bool:
    """Two ids one of which contains the other (case-insensitively)."""
    low_a, low_b = a.lower(), b.lower()
    return low_a in low_b or low_b in low_a


def phase_token(number: str) -> str:
    """The number as phase folders and files spell it: `6.1` -> `06.1`, `7` -> `07`."""
    major, _, rest = number.partition(".")
    return f"{int(major):02d}" + (f".{rest}" if rest else "")


def roadmap_number(layout: LayoutSpec) -> str:
    return phase_token(layout.phase_number) if layout.roadmap_number_padded else layout.phase_number


_YAML_START = set("-?:,[]{}#&*!|>'\"%@`")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}
_YAML_NUMBER = re.compile(
    r"^[-+]?(\d[\d_]*)?(\.[\d_]*)?([eE][-+]?\d+)?$|^0[xob]|^[-+]?\.(inf|nan)$"
)


def yaml_needs_quotes(value: str, flow: bool) -> bool:
    if not value or value[0] in _YAML_START or value != value.strip():
        return True
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return True
    if flow and any(c in value for c in ",[]{}"):
        return True
    return value.lower() in _YAML_WORDS or bool(_YAML_NUMBER.match(value)) or ":" in value[:3]


def yaml_quote(value: str, single: bool) -> str:
    if single:
        return "'" + value.replace("'", "''") + "'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def yaml_scalar(value: str, flow: bool, force_quotes: bool = False, single: bool = False) -> str:
    if force_quotes or yaml_needs_quotes(value, flow):
        return yaml_quote(value, single)
    return value


def yaml_list(
    key: str, values: Sequence[str], flow: bool, indent: str = "", quoted: bool = False
) -> list[str]:
    """A YAML list in flow (`key: [a, b]`) or block (`- a`) style."""
    if flow or not values:
        inner = ", ".join(yaml_scalar(v, True, quoted) for v in values)
        return [f"{indent}{key}: [{inner}]"]
    return [f"{indent}{key}:"] + [f"{indent}  - {yaml_scalar(v, False, quoted)}" for v in values]


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def slugify(words: str, keep_unicode: bool) -> str:
    text = words.lower()
    if not keep_unicode:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    return text


def finish_text(lines: Sequence[str], crlf: bool = False, bom: bool = False) -> str:
    text = "\n".join(lines).rstrip("\n") + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    if crlf:
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if bom else "") + text


# ---------------------------------------------------------------------------------------------
# Strategies: ids, decoys, paths.
# ---------------------------------------------------------------------------------------------

T = TypeVar("T")
BOOL = st.booleans()


@functools.cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    """Integer strategies, built once: building strategies inside loops dominates run time."""
    return st.integers(low, high)


@functools.cache
def _index_lists(n: int, low: int, high: int, unique: bool) -> st.SearchStrategy[list[int]]:
    return st.lists(ints(0, n - 1), min_size=low, max_size=high, unique=unique)


def choose(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of `options` (repeat an option to make it likelier)."""
    return options[draw(ints(0, len(options) - 1))]


def subset(draw: st.DrawFn, items: Sequence[T], low: int = 0, high: int | None = None) -> list[T]:
    """Distinct items, in drawn order."""
    distinct = list(dict.fromkeys(items))
    top = len(distinct) if high is None else min(high, len(distinct))
    return [distinct[i] for i in draw(_index_lists(len(distinct), min(low, top), top, True))]


def repeats(draw: st.DrawFn, items: Sequence[T], low: int, high: int) -> list[T]:
    """Items drawn with repetition."""
    return [items[i] for i in draw(_index_lists(len(items), low, high, False))]


_two = st.integers(1, 99).map(lambda n: f"{n:02d}")


@functools.cache
def _random_ids() -> st.SearchStrategy[str]:
    """Ids of letters, digits, `-`, `_` and `.`: a letter first, a digit somewhere."""
    head = st.sampled_from("ABCDEFGHJKLMNPQRSTUVWXYZ")
    part = st.text(
        "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghjkmnpqrstuvwxyz0123456789", min_size=1, max_size=4
    )
    seps = st.lists(st.tuples(st.sampled_from("-_."), part), min_size=1, max_size=3)
    body = st.builds(lambda h, p, rest: h + p + "".join(s + q for s, q in rest), head, part, seps)
    return body.filter(lambda s: any(c.isdigit() for c in s) and not _YAML_NUMBER.match(s))


@functools.cache
def id_strategy(shape: str) -> st.SearchStrategy[str]:
    """One requirement id of the given shape."""
    prefixes = st.sampled_from(ID_PREFIXES)
    small = st.integers(1, 40)
    builders: dict[str, st.SearchStrategy[str]] = {
        "prefix-number": st.builds(lambda p, n: f"{p}-{n}", prefixes, _two),
        "prefix-word": st.builds(
            lambda p, w: f"{p}-{w}",
            st.sampled_from(("UX", "MED", "CORE", "APP")),
            st.sampled_from(ID_WORDS),
        ),
        "decision": st.builds(lambda n: f"D-{n}", _two),
        "req-lower": st.builds(
            lambda a, b: f"REQ-{a}-{b}", st.sampled_from(LOWER_WORDS), st.sampled_from(LOWER_WORDS)
        ).filter(lambda s: s.count("-") == 2 and s.split("-")[1] != s.split("-")[2]),
        "versioned": st.builds(lambda v, p, n: f"V{v}-{p}-{n}", small, prefixes, _two),
        "phase-decision": st.builds(
            lambda n, c, m: f"PHASE-{n}-D-{c}{m}", small, st.sampled_from("ABC"), small
        ),
        "phase-local": st.builds(lambda p, n: f"{p}-{n}-phase-local", prefixes, _two),
        "r": st.builds(lambda n: f"R{n}", small),
        "r-dotted": st.builds(lambda n, m: f"R{n}.{m}", small, st.integers(1, 9)),
        "fr-dotted": st.builds(lambda n, m: f"FR{n}.{m}", small, st.integers(1, 9)),
        "nfr": st.builds(lambda n: f"NFR{n}", small),
        "underscore": st.builds(
            lambda p, n: f"{p}_{n}", st.sampled_from(("SYNC", "API", "UI")), _two
        ),
        "decimal-k": st.builds(
            lambda n, m, k: f"{n:02d}.{m}-K{k}", small, st.integers(1, 9), st.integers(1, 9)
        ),
        "random": _random_ids(),
    }
    return builders[shape]


any_id = st.sampled_from(ID_SHAPES).flatmap(id_strategy)


@functools.cache
def _id_lists(wanted: int) -> st.SearchStrategy[list[str]]:
    return st.lists(any_id, min_size=wanted, max_size=wanted + 3)


@st.composite
def id_set(draw: st.DrawFn, low: int, high: int, avoid: Sequence[str]) -> tuple[str, ...]:
    """Distinct ids, none related to any id in `avoid`.

    Ids in the set may contain one another (`R1` and `R1.2`); the caller forces such pairs to be
    reported together so that "mentioned by a summary" stays unambiguous.
    """
    wanted = draw(ints(low, high))
    chosen: list[str] = []
    for candidate in draw(_id_lists(wanted)):
        if (
            len(chosen) < wanted
            and candidate not in chosen
            and not any(related(candidate, a) for a in avoid)
        ):
            chosen.append(candidate)
    return tuple(chosen)


@functools.cache
def decoy_token(kind: str) -> st.SearchStrategy[str]:
    three = st.integers(1, 999).map(lambda n: f"{n:03d}")
    builders: dict[str, st.SearchStrategy[str]] = {
        "screen": st.builds(lambda p, n: f"{p}-{n}", st.sampled_from(("S", "SCR")), _two),
        "pattern": st.builds(
            lambda p, n: f"{p}-{n}", st.sampled_from(("DEC", "PAT", "ADR")), three
        ),
        "standard": st.sampled_from([s for s, _ in STANDARDS]),
        "decision": st.one_of(
            st.builds(lambda n: f"D-{n}", _two), st.builds(lambda n: f"D-KV-{n}", _two)
        ),
        "ticket": st.builds(
            lambda p, n: f"{p}-{n}", st.sampled_from(TICKET_PROJECTS), st.integers(100, 9999)
        ),
        "threat": st.builds(lambda a, b: f"T-{a}-{b}", _two, _two),
        "cve": st.builds(
            lambda y, n: f"CVE-20{y}-{n}", st.integers(19, 25), st.integers(1000, 49999)
        ),
        "compiler": st.one_of(
            st.builds(lambda n: f"TS{n}", st.integers(1000, 7999)),
            st.builds(lambda n: f"E0{n}", st.integers(100, 799)),
        ),
        "error-code": st.builds(lambda n: f"ERR-{n}", three),
    }
    return builders[kind]


@st.composite
def decoy_pool(draw: st.DrawFn, avoid: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(kind, token) pairs, none related to an avoided id nor to each other's tokens."""
    kinds = repeats(draw, DECOY_KINDS, 0, 7)
    chosen: list[tuple[str, str]] = []
    for kind in kinds:
        token = draw(decoy_token(kind))
        if any(related(token, a) for a in avoid) or any(token == t for _, t in chosen):
            continue
        chosen.append((kind, token))
    return tuple(chosen)


@functools.cache
def _ordinary_path() -> st.SearchStrategy[str]:
    return st.builds(
        lambda r, s, n, e: f"{r}/{s}/{n}{e}",
        st.sampled_from(PATH_ROOTS),
        st.sampled_from(PATH_SUBS),
        st.sampled_from(PATH_NAMES),
        st.sampled_from(PATH_EXTS),
    )


def _nfd(path: str) -> str:
    return unicodedata.normalize("NFD", path)


@functools.cache
def _ordinary_paths() -> st.SearchStrategy[list[str]]:
    return st.lists(_ordinary_path(), min_size=1, max_size=3, unique=True)


@functools.cache
def path_of_shape(shape: str) -> st.SearchStrategy[str]:
    fixed: dict[str, Sequence[str]] = {
        "dotfile": DOTFILES,
        "multi-ext": MULTI_EXT,
        "no-ext": NO_EXT,
        "lock": LOCKS,
        "bundle": BUNDLES,
        "template": TEMPLATES,
        "glob": GLOBS,
        "unicode": UNICODE_PATHS,
        "spaced": SPACED,
        "absolute": ABSOLUTE,
        "odd": ODD,
        "deep": DEEP,
    }
    if shape == "ordinary":
        return _ordinary_path()
    if shape == "unicode-nfd":
        return st.sampled_from([p for p in UNICODE_PATHS if _nfd(p) != p]).map(_nfd)
    return st.sampled_from(fixed[shape])


def bulk_paths(seed: int, count: int) -> list[str]:
    """Many ordinary paths for long lists, derived from one drawn seed."""
    paths = []
    for i in range(count):
        root = pick(PATH_ROOTS, seed, i)
        sub = pick(PATH_SUBS, seed // 3, i * 5 + 1)
        name = pick(PATH_NAMES, seed // 7, i * 3 + 2)
        ext = pick(PATH_EXTS, seed // 11, i + 3)
        paths.append(f"{root}/{sub}/{name}_{i:02d}{ext}")
    return paths


@st.composite
def path_pool(draw: st.DrawFn, want_bulk: int) -> tuple[str, ...]:
    """The paths a phase may mention: drawn shapes, twins, and bulk ordinary paths."""
    shapes = repeats(draw, PATH_SHAPES, 6, 16)
    pool: list[str] = []
    for shape in shapes:
        pool.append(draw(path_of_shape(shape)))
    twin = choose(draw, ("none", "same-name", "nested-bare", "both"))
    base = draw(_ordinary_path())
    folder, _, name = base.rpartition("/")
    if twin in ("same-name", "both"):
        pool += [base, "tests/" + folder.split("/", 1)[-1] + "/" + name]
    if twin in ("nested-bare", "both"):
        pool += [base, name]
    pool += bulk_paths(draw(ints(0, 10**6)), want_bulk)
    return tuple(dict.fromkeys(pool))


# ---------------------------------------------------------------------------------------------
# Strategies: layout and plan shapes.
# ---------------------------------------------------------------------------------------------


@st.composite
def phase_numbers(draw: st.DrawFn) -> str:
    major = draw(
        st.one_of(st.integers(0, 12), st.integers(13, 60), st.sampled_from((99, 100, 117)))
    )
    depth = choose(draw, (0, 0, 0, 1, 2))
    parts = [str(major)] + [str(draw(ints(1, 5))) for _ in range(depth)]
    return ".".join(parts)


@st.composite
def layouts(draw: st.DrawFn) -> LayoutSpec:
    container = choose(draw, ("phases", "phases", "milestone", "archive"))
    summary_naming = choose(draw, ("phase-plan", "phase-plan", "phase-plan", "plan-only", "single"))
    plan_choices = {
        "phase-plan": ("phase-plan", "phase-plan", "plan-after", "both", "none"),
        "plan-only": ("plan-only", "none"),
        "single": ("single", "none"),
    }[summary_naming]
    sibling_choices = {
        "phases": ("none", "none", "same-folder"),
        "milestone": ("none", "other-milestone", "current-phases"),
        "archive": ("none", "current-phases"),
    }[container]
    sibling = choose(draw, sibling_choices)
    versions = subset(draw, ("v0.8", "v1.0", "v1.1", "v1.5", "v2.0", "v3.0"), 3, 3)
    return LayoutSpec(
        container=container,
        milestone=versions[0] if container == "milestone" else "",
        other_milestone=versions[1],
        current_milestone=versions[2],
        folder_prefix=choose(draw, ("", "", "", "CTRX-", "app-", "m2-")),
        phase_number=draw(phase_numbers()),
        roadmap_number_padded=draw(BOOL),
        unicode_slug=draw(BOOL) and sibling == "none",
        summary_naming=summary_naming,
        plan_naming=choose(draw, plan_choices),
        letter_suffix=summary_naming != "single" and choose(draw, (False, False, True)),
        roadmap_lists_phase=choose(draw, (True, True, True, False)),
        sibling=sibling,
        evidence_folder=choose(draw, (False, False, True)),
    )


@st.composite
def plan_ids(draw: st.DrawFn, count: int, letters: bool) -> tuple[str, ...]:
    """`01`, `02`, ...; with letters, groups such as `01a`, `01b`, `02`."""
    if not letters:
        start = choose(draw, (1, 1, 1, 0))
        return tuple(f"{start + i:02d}" for i in range(count))
    ids: list[str] = []
    base = 0
    while len(ids) < count:
        base += 1
        size = min(draw(ints(1, 3)), count - len(ids))
        lettered = size > 1 or draw(BOOL)
        ids += [f"{base:02d}" + (chr(ord("a") + k) if lettered else "") for k in range(size)]
    return tuple(ids)


STATUS_STYLES = ("bold", "bold-outside", "heading", "blockquote", "trailing", "frontmatter", "none")
REQ_KEYS = (
    "requirements-completed",
    "requirements-completed",
    "requirements_completed",
    "requirements",
    "requirements-addressed",
    "requirements_fulfilled",
)
NEUTRAL_REQ_KEYS = ("requirements", "requirements-addressed")


@dataclass(frozen=True)
class PlanShape:
    """The parts of a plan drawn before ids and paths are handed out."""

    style: str
    size: str
    language: str
    translate_headings: bool
    frontmatter: str
    status: str
    status_style: str
    req_key: str
    req_style: str
    covered_style: str
    body_line_style: str
    decisions_style: str
    n_tasks: int
    filler: int
    seed: int
    crlf: bool
    bom: bool


@st.composite
def plan_shapes(draw: st.DrawFn, language: str) -> PlanShape:
    style = choose(draw, ("gsd", "gsd", "gsd", "legion", "freeform", "tiny"))
    size = (
        "tiny" if style == "tiny" else choose(draw, ("small", "small", "medium", "medium", "large"))
    )
    tasks, filler = {
        "tiny": ((0, 0), (0, 0)),
        "small": ((1, 3), (0, 0)),
        "medium": ((3, 8), (1, 3)),
        "large": ((14, 36), (16, 34)),
    }[size]
    frontmatter = (
        "none" if style in ("tiny", "legion") else choose(draw, ("full", "full", "compact", "none"))
    )
    if style == "legion" and draw(BOOL):
        frontmatter = "compact"
    status = choose(draw, ("complete",) * 9 + ("partial", "warnings", "failed"))
    status_style = choose(draw, STATUS_STYLES)
    if style == "tiny" or (status_style == "frontmatter" and frontmatter == "none"):
        status_style = "none"
    if status != "complete" and status_style == "none" and style != "tiny":
        status_style = "bold"
    plan_language = language if draw(ints(0, 5)) else "en"
    return PlanShape(
        style=style,
        size=size,
        language=plan_language,
        translate_headings=plan_language != "en" and choose(draw, (True, True, False)),
        frontmatter=frontmatter,
        status="complete" if style == "tiny" else status,
        status_style=status_style,
        req_key=choose(draw, REQ_KEYS),
        req_style=choose(draw, ("flow", "block", "quoted", "commented")),
        covered_style=choose(draw, ("colon", "check", "bold-dash", "box", "table")),
        body_line_style=choose(draw, ("bold-inside", "bold-outside", "plain", "annotated")),
        decisions_style=choose(draw, ("fm-strings", "fm-dicts", "body-list", "body-table", "none")),
        n_tasks=draw(ints(*tasks)),
        filler=draw(ints(*filler)),
        seed=draw(ints(0, 10**6)),
        crlf=choose(draw, (False,) * 7 + (True,)),
        bom=choose(draw, (False,) * 15 + (True,)),
    )


def allowed_channels(shape: PlanShape, tone: str) -> tuple[str, ...]:
    """Where a mention of this tone may go in a plan of this shape (the verdict stays readable)."""
    if shape.style == "tiny":
        return ("prose",)
    channels = ["covered", "prose"]
    fm_ok = shape.frontmatter != "none" and (tone == "done" or shape.req_key in NEUTRAL_REQ_KEYS)
    if fm_ok:
        channels += ["fm", "fm", "fm"]
    if tone == "done" or shape.status == "failed":
        channels.append("body-line")
    return tuple(channels)


FM_LIST_KINDS = ("fm-key-files", "fm-key-files", "fm-flat")
BODY_LIST_KINDS = (
    "body-bullets",
    "body-bullets",
    "body-table",
    "body-lines",
    "body-fenced",
    "body-numbered",
)
KEY_FILES_KEYS = ("key-files", "key-files", "key_files", "keyFiles")
FLAT_KEYS = ("files_modified", "files-modified", "files_changed", "files")
BULLET_SHAPES = (
    "tick-dash",
    "tick-emdash",
    "bold-colon",
    "bare-emdash",
    "bare",
    "tick-new",
    "tick-only",
    "star",
)


@st.composite
def file_lists_for(draw: st.DrawFn, shape: PlanShape, pool: Sequence[str]) -> tuple[FileList, ...]:
    """The declared file lists of one summary, entries drawn from the pool."""
    if shape.style == "tiny":
        return ()
    limit = {"small": 5, "medium": 12, "large": 40}[shape.size]
    lang = LANG[shape.language]
    kinds: list[str] = []
    if shape.frontmatter != "none" and choose(draw, (True, True, True, False)):
        kinds.append(choose(draw, FM_LIST_KINDS))
    kinds += subset(draw, BODY_LIST_KINDS, 0, 2)
    if shape.style == "legion" and not any(k.startswith("body") for k in kinds):
        kinds.append("body-bullets")
    main = draw(_index_lists(len(pool), 1, min(limit, len(pool)), True))
    if shape.size == "large":
        bulk_start = max(0, len(pool) - 40)
        main = list(
            dict.fromkeys(main + list(range(bulk_start, min(len(pool), bulk_start + limit))))
        )[:limit]
    lists = []
    for kind in kinds:
        indices = main if draw(BOOL) else subset(draw, main, 1)
        entries = tuple(
            PathEntry(
                pool[i],
                draw(ints(0, 5)),
                pick(lang.notes, shape.seed, i) if draw(BOOL) else "",
            )
            for i in indices
        )
        lists.append(
            FileList(
                kind=kind,
                key=_list_key(draw, kind, shape),
                style=_list_style(draw, kind),
                entries=entries,
                split=draw(ints(0, len(entries))),
            )
        )
    return tuple(lists)


def _list_key(draw: st.DrawFn, kind: str, shape: PlanShape) -> str:
    if kind == "fm-key-files":
        return choose(draw, KEY_FILES_KEYS)
    if kind == "fm-flat":
        return choose(draw, FLAT_KEYS)
    lang = LANG[shape.language] if shape.translate_headings else EN
    return choose(draw, lang.files_headings)


def _list_style(draw: st.DrawFn, kind: str) -> str:
    if kind.startswith("fm"):
        return choose(draw, ("flow", "block", "block"))
    if kind == "body-bullets":
        return choose(draw, BULLET_SHAPES)
    if kind == "body-table":
        return choose(draw, ("plain", "ticked", "three-columns"))
    return "default"


# ---------------------------------------------------------------------------------------------
# The phase strategy: hands ids, decoys and paths to plans and files.
# ---------------------------------------------------------------------------------------------


@dataclass
class _Assignment:
    """Mutable bookkeeping while a phase is drawn; frozen into the spec at the end."""

    mentions: list[list[IdMention]]
    plan_file_ids: list[list[str]]
    roadmap_ids: list[str]
    gap_ids: list[str]
    doc_ids: list[str]


def _assign_ids(
    draw: st.DrawFn,
    declared: Sequence[str],
    shapes: Sequence[PlanShape],
    layout: LayoutSpec,
    has_gap: bool,
) -> _Assignment:
    """Decide, for every declared id, which files declare it and which summaries report it."""
    has_plans = layout.plan_naming != "none"
    work = _Assignment([[] for _ in shapes], [[] for _ in shapes], [], [], [])
    # Ids that contain one another are reported together: "a summary mentions R1" stays exact.
    must_report = {a for a in declared for b in declared if a != b and related(a, b)}
    for req_id in declared:
        reported = req_id in must_report or choose(draw, (True, True, True, False))
        if not reported and not (layout.roadmap_lists_phase or has_plans):
            reported = True
        if reported:
            _report(draw, req_id, shapes, work)
            if layout.container == "archive" and req_id in work.doc_ids:
                # a shipped phase's numbers restart: the current REQUIREMENTS.md cannot map an
                # id to it, so an id it reports only in prose is declared by a PLAN or the ROADMAP
                work.doc_ids.remove(req_id)
                if has_plans:
                    work.plan_file_ids[0].append(req_id)
                elif layout.roadmap_lists_phase:
                    work.roadmap_ids.append(req_id)
                else:
                    for mentions in work.mentions:
                        mentions[:] = [m for m in mentions if m.req_id != req_id]
                    continue
            if layout.roadmap_lists_phase and draw(BOOL):
                work.roadmap_ids.append(req_id)
            if has_plans and draw(BOOL):
                work.plan_file_ids[draw(ints(0, len(shapes) - 1))].append(req_id)
            continue
        _declare_unreported(draw, req_id, shapes, layout, has_gap, work)
    return work


def _declare_unreported(
    draw: st.DrawFn,
    req_id: str,
    shapes: Sequence[PlanShape],
    layout: LayoutSpec,
    has_gap: bool,
    work: _Assignment,
) -> None:
    places = ["roadmap"] if layout.roadmap_lists_phase else []
    if layout.plan_naming != "none":
        places += ["plan", "gap"] if has_gap else ["plan"]
    chosen = subset(draw, places, 1, 2)
    if "roadmap" in chosen:
        work.roadmap_ids.append(req_id)
    if "plan" in chosen:
        work.plan_file_ids[draw(ints(0, len(shapes) - 1))].append(req_id)
    if "gap" in chosen:
        work.gap_ids.append(req_id)


def _report(draw: st.DrawFn, req_id: str, shapes: Sequence[PlanShape], work: _Assignment) -> None:
    """One or two mentions in summaries; a weak mention is backed by a REQUIREMENTS.md line."""
    for _ in range(draw(ints(1, 2))):
        k = draw(ints(0, len(shapes) - 1))
        shape = shapes[k]
        if shape.status == "failed":
            tone = "partial"
        else:
            tone = choose(draw, ("done", "done", "done", "done", "partial"))
        channel = choose(draw, allowed_channels(shape, tone))
        weak = channel == "prose" or (channel == "covered" and shape.translate_headings)
        if weak and req_id not in work.doc_ids:
            work.doc_ids.append(req_id)
        work.mentions[k].append(IdMention(req_id, channel, tone, draw(ints(0, 999))))


def _decoy_uses(
    draw: st.DrawFn, pool: Sequence[tuple[str, str]], wheres: Sequence[str]
) -> tuple[DecoyUse, ...]:
    if not pool:
        return ()
    uses = []
    for _ in range(draw(ints(0, min(3, len(pool))))):
        kind, token = choose(draw, pool)
        wanted = "decisions" if kind == "decision" and "decisions" in wheres else None
        where = wanted or choose(draw, wheres)
        uses.append(DecoyUse(token, kind, where, draw(ints(0, 999))))
    return tuple(uses)


def _plan_file_names(layout: LayoutSpec, pid: str) -> tuple[str, ...]:
    tok = phase_token(layout.phase_number)
    return {
        "phase-plan": (f"{tok}-{pid}-PLAN.md",),
        "plan-after": (f"{tok}-PLAN-{pid}.md",),
        "both": (f"{tok}-{pid}-PLAN.md", f"{tok}-PLAN-{pid}.md"),
        "plan-only": (f"{pid}-PLAN.md",),
        "single": (f"{tok}-PLAN.md",),
        "none": (),
    }[layout.plan_naming]


def _summary_name(layout: LayoutSpec, pid: str) -> str:
    tok = phase_token(layout.phase_number)
    return {
        "phase-plan": f"{tok}-{pid}-SUMMARY.md",
        "plan-only": f"{pid}-SUMMARY.md",
        "single": f"{tok}-SUMMARY.md",
    }[layout.summary_naming]


def _next_plan_id(pids: Sequence[str]) -> str:
    numbers = [int(m.group()) for p in pids if (m := re.match(r"\d+", p))]
    return f"{max(numbers, default=0) + 1:02d}"


def _phase_name(draw: st.DrawFn, language: str) -> str:
    lang = LANG[language]
    words = subset(draw, lang.name_words, 1, 3)
    return "".join(words) if language in ("zh", "ja") else " ".join(words)


@st.composite
def _our_name(draw: st.DrawFn, language: str, layout: LayoutSpec) -> tuple[str, str]:
    """The phase name and folder slug: a sibling with the same number, or an archive read
    against the current ROADMAP (matched by name: docs/compaction.md), forces a derivable slug."""
    if layout.sibling != "none" or (layout.container == "archive" and not layout.unicode_slug):
        name = _phase_name(draw, "en")
        return name, slugify(name, keep_unicode=False)
    name = _phase_name(draw, language)
    slug = slugify(name, keep_unicode=layout.unicode_slug)
    if not slug:  # e.g. a Chinese name with an ASCII slug: the slug is an English gloss
        slug = slugify(_phase_name(draw, "en"), keep_unicode=False)
    return name, slug


DISTRACTOR_KINDS = (
    "CONTEXT",
    "RESEARCH",
    "VERIFICATION",
    "VALIDATION",
    "UAT",
    "REVIEW",
    "PLANNING-SUMMARY",
    "CLOSEOUT-SUMMARY",
    "PLAN-VERIFICATION",
    "deferred-items",
    "gitkeep",
)


def _distractor_name(kind: str, layout: LayoutSpec, first_pid: str) -> str:
    tok = phase_token(layout.phase_number)
    special = {
        "PLANNING-SUMMARY": "PLANNING-SUMMARY.md",
        "deferred-items": "deferred-items.md",
        "gitkeep": ".gitkeep",
        "CLOSEOUT-SUMMARY": f"{tok}-CLOSEOUT-SUMMARY.md",
        "PLAN-VERIFICATION": f"{tok}-{first_pid or '01'}-VERIFICATION.md",
    }
    return special.get(kind, f"{tok}-{kind}.md")


@st.composite
def _distractors(
    draw: st.DrawFn,
    layout: LayoutSpec,
    first_pid: str,
    declared: Sequence[str],
    foreign_ids: Sequence[str],
    decoys: Sequence[tuple[str, str]],
    paths: Sequence[str],
) -> tuple[DistractorSpec, ...]:
    kinds = subset(draw, DISTRACTOR_KINDS, 0, 5)
    if layout.evidence_folder:
        kinds.append("evidence")
    specs = []
    for kind in kinds:
        empty = kind == "gitkeep"
        cites_foreign = kind in ("CONTEXT", "RESEARCH", "deferred-items") and foreign_ids
        name = (
            "evidence/run-notes.md"
            if kind == "evidence"
            else _distractor_name(kind, layout, first_pid)
        )
        specs.append(
            DistractorSpec(
                name=name,
                kind=kind,
                ids=_some(draw, declared, 4) if not empty and kind != "evidence" else (),
                foreign_ids=_some(draw, foreign_ids, 2) if cites_foreign else (),
                decoys=() if empty else _decoy_uses(draw, decoys, ("file",)),
                paths=() if empty else _some(draw, paths, 4),
                seed=draw(ints(0, 10**6)),
            )
        )
    return tuple(specs)


def _some(draw: st.DrawFn, items: Sequence[str], most: int) -> tuple[str, ...]:
    if not items:
        return ()
    return tuple(subset(draw, items, 0, most))


def _foreign_milestone(draw: st.DrawFn, layout: LayoutSpec, same: bool) -> str:
    if layout.container == "milestone":
        if same:
            other = layout.sibling == "other-milestone"
            return layout.other_milestone if other else layout.current_milestone
        return choose(draw, (layout.milestone, layout.current_milestone))
    if layout.sibling == "same-folder":
        if same:
            return layout.other_milestone
        return choose(draw, (layout.current_milestone, layout.other_milestone))
    return ""


def _foreign_folder(
    draw: st.DrawFn, layout: LayoutSpec, number: str, slug: str, milestone: str, same: bool
) -> str:
    name = f"{phase_token(number)}-{slug}"
    if same and layout.sibling == "other-milestone":
        return f".planning/milestones/{layout.other_milestone}-phases/{name}"
    if not same and not choose(draw, (False, False, True)):
        return ""
    if not same and layout.container == "milestone" and milestone == layout.milestone:
        return f".planning/milestones/{layout.milestone}-phases/{name}"
    return f".planning/phases/{name}"


@st.composite
def _foreign_phases(
    draw: st.DrawFn,
    layout: LayoutSpec,
    language: str,
    our_slug: str,
    avoid_ids: Sequence[str],
    avoid_paths: Sequence[str],
) -> tuple[ForeignPhase, ...]:
    """Other phases: ROADMAP neighbours, some with folders, and the same-number sibling."""
    numbers = [str(n) for n in draw(_index_lists(41, 1, 4, True))]
    entries = [(n, False) for n in numbers if n != layout.phase_number]
    if layout.sibling != "none":
        entries.append((layout.phase_number, True))
    if not entries:
        return ()
    ids = draw(id_set(len(entries), len(entries) * 3, avoid_ids))
    phases = []
    for i, (number, same) in enumerate(entries):
        name = _phase_name(draw, "en" if same else language)
        slug = slugify(name, keep_unicode=False) or slugify(_phase_name(draw, "en"), False)
        if slug == our_slug:  # the ROADMAP must tell the two apart by name, as users do
            name += " 2"
            slug = slugify(name, keep_unicode=False)
        milestone = _foreign_milestone(draw, layout, same)
        folder = _foreign_folder(draw, layout, number, slug, milestone, same)
        paths: tuple[str, ...] = ()
        if folder:
            drawn = draw(_ordinary_paths())
            paths = tuple(p for p in drawn if p not in avoid_paths)
        phases.append(
            ForeignPhase(number, name, slug, ids[i :: len(entries)], paths, milestone, folder, same)
        )
    return tuple(phases)


@st.composite
def _phase_specs(draw: st.DrawFn, languages: Sequence[str] = LANGUAGES) -> PhaseSpec:
    language = choose(draw, tuple(languages))
    layout = draw(layouts())
    if layout.summary_naming == "single":
        pids: tuple[str, ...] = ("",)
    else:
        pids = draw(plan_ids(draw(ints(1, 8)), layout.letter_suffix))
    shapes = [draw(plan_shapes(language)) for _ in pids]
    can_gap = layout.plan_naming != "none" and layout.summary_naming != "single"
    has_gap = can_gap and choose(draw, (False, False, True))
    name, slug = draw(_our_name(language, layout))
    declared = draw(id_set(0, 12, ()))
    decoys = draw(decoy_pool(declared))
    pool = draw(path_pool(40 if any(s.size == "large" for s in shapes) else 0))
    avoid = tuple(declared) + tuple(t for _, t in decoys)
    foreign = draw(_foreign_phases(layout, language, slug, avoid, pool))
    work = _assign_ids(draw, declared, shapes, layout, has_gap)
    plans = tuple(
        _build_plan(draw, layout, pid, shapes[k], work, k, pool, decoys)
        for k, pid in enumerate(pids)
    )
    listed = [e.path for p in plans for fl in p.file_lists for e in fl.entries]
    gap_pid = _next_plan_id(pids) if has_gap else ""
    foreign_ids = tuple(i for f in foreign for i in f.ids)
    distractor_paths = [p for p in pool if p not in listed] + list(dict.fromkeys(listed))
    return PhaseSpec(
        project=choose(draw, PROJECTS),
        layout=layout,
        language=language,
        name=name,
        slug=slug,
        plans=plans,
        gap_plan_id=gap_pid,
        gap_plan_files=_plan_file_names(layout, gap_pid) if has_gap else (),
        gap_ids=tuple(work.gap_ids),
        roadmap=draw(_roadmap_spec(layout, work.roadmap_ids, decoys)),
        requirements_doc=draw(_requirements_doc(layout, declared, work.doc_ids, decoys)),
        foreign=foreign,
        distractors=draw(
            _distractors(layout, pids[0], declared, foreign_ids, decoys, distractor_paths)
        ),
        seed=draw(ints(0, 10**6)),
    )


@st.composite
def _roadmap_spec(
    draw: st.DrawFn, layout: LayoutSpec, own_ids: Sequence[str], decoys: Sequence[tuple[str, str]]
) -> RoadmapSpec:
    annotations = ("", "", "", "(carried over)", "(docs move)")
    return RoadmapSpec(
        style=choose(draw, ("gsd", "gsd", "legion", "blockquote", "checklist")),
        label=choose(draw, ("**Requirements**:", "**Requirements:**")),
        own_ids=tuple(own_ids),
        annotations=tuple(choose(draw, annotations) for _ in own_ids),
        empty_marker=choose(draw, ("TBD", "", "(housekeeping, no new ids)")),
        decoys=_decoy_uses(draw, decoys, ("goal",)) if layout.roadmap_lists_phase else (),
        crlf=choose(draw, (False, False, False, False, False, True)),
        seed=draw(ints(0, 10**6)),
    )


@st.composite
def _requirements_doc(
    draw: st.DrawFn,
    layout: LayoutSpec,
    declared: Sequence[str],
    needed: Sequence[str],
    decoys: Sequence[tuple[str, str]],
) -> RequirementsDocSpec | None:
    if not needed and not draw(BOOL):
        return None
    extra = [i for i in declared if i not in needed and choose(draw, (False, False, True))]
    # a milestone's own ids are mapped to its phases by the milestone's own copy (the current
    # file's `Phase N` may be another milestone's phase: numbers restart)
    in_milestone = layout.container == "milestone" and (bool(needed) or draw(BOOL))
    return RequirementsDocSpec(
        location="milestone" if in_milestone else "top",
        own_ids=(*needed, *extra),
        style=choose(draw, ("checkbox", "checkbox", "bold", "dash")),
        traceability=layout.sibling == "none" and draw(BOOL),
        traced=tuple(needed),
        decoys=_decoy_uses(draw, decoys, ("file",)),
        seed=draw(ints(0, 10**6)),
    )


def _build_plan(
    draw: st.DrawFn,
    layout: LayoutSpec,
    pid: str,
    shape: PlanShape,
    work: _Assignment,
    k: int,
    pool: Sequence[str],
    decoys: Sequence[tuple[str, str]],
) -> PlanSpec:
    lists = draw(file_lists_for(shape, pool))
    listed_here = list(dict.fromkeys(e.path for fl in lists for e in fl.entries))
    tiny = shape.style == "tiny"
    prose = _some(draw, pool, 1 if tiny else 4)
    plan_files = _plan_file_names(layout, pid)
    uses = (
        ()
        if tiny
        else _decoy_uses(
            draw, decoys, ("deliverables", "decisions", "deviations", "verification", "plan-body")
        )
    )
    uses = tuple(_relocated(u, shape, bool(plan_files)) for u in uses)
    lang = LANG[shape.language]
    return PlanSpec(
        plan_id=pid,
        summary_name=_summary_name(layout, pid),
        plan_files=plan_files,
        title=" ".join(subset(draw, lang.name_words, 1, 2)),
        style=shape.style,
        size=shape.size,
        language=shape.language,
        translate_headings=shape.translate_headings,
        frontmatter=shape.frontmatter,
        status=shape.status,
        status_style=shape.status_style,
        req_key=shape.req_key,
        req_style=shape.req_style,
        covered_style=shape.covered_style,
        body_line_style=shape.body_line_style,
        decisions_style=shape.decisions_style,
        mentions=tuple(work.mentions[k]),
        plan_file_ids=tuple(dict.fromkeys(work.plan_file_ids[k])),
        plan_req_key=choose(draw, ("requirements", "requirements", "requirements_addressed")),
        plan_file_paths=_some(draw, listed_here, 6) if plan_files else (),
        file_lists=lists,
        prose_paths=prose,
        decoys=uses,
        n_tasks=shape.n_tasks,
        filler=shape.filler,
        seed=shape.seed,
        crlf=shape.crlf,
        bom=shape.bom,
    )


def _relocated(use: DecoyUse, shape: PlanShape, has_plan_file: bool) -> DecoyUse:
    """Send a decoy where it can be written: no PLAN file, no decision list -> deliverables."""
    fm_decisions = (
        shape.decisions_style in ("fm-strings", "fm-dicts") and shape.frontmatter != "none"
    )
    body_decisions = shape.decisions_style in ("body-list", "body-table")
    lost = (use.where == "plan-body" and not has_plan_file) or (
        use.where == "decisions" and not (fm_decisions or body_decisions)
    )
    return DecoyUse(use.token, use.kind, "deliverables", use.seed) if lost else use


def phase_specs(languages: Sequence[str] = LANGUAGES) -> st.SearchStrategy[PhaseSpec]:
    """Specs of whole phases (their main language one of `languages`); only specs whose truth
    is unambiguous once written are kept."""
    return _phase_specs(tuple(languages)).filter(
        lambda spec: not truth_problems(spec, render_files(spec))
    )


# ---------------------------------------------------------------------------------------------
# Rendering: a pure function from the spec to {path relative to root: text}.
# ---------------------------------------------------------------------------------------------


def phase_folder_name(spec: PhaseSpec) -> str:
    return f"{spec.layout.folder_prefix}{phase_token(spec.layout.phase_number)}-{spec.slug}"


def phase_folder(spec: PhaseSpec) -> str:
    layout = spec.layout
    parent = {
        "phases": ".planning/phases",
        "milestone": f".planning/milestones/{layout.milestone}-phases",
        "archive": ".planning/archive",
    }[layout.container]
    return f"{parent}/{phase_folder_name(spec)}"


def headings_of(plan: PlanSpec) -> Language:
    return LANG[plan.language] if plan.translate_headings else EN


ENGLISH_DECOY_SENTENCES = {
    "ticket": "Background is in ticket {tok}.",
    "threat": "Threat {tok} from the threat model is out of scope here.",
    "cve": "The dependency bump is unrelated to {tok}.",
    "compiler": "The compiler reported {tok} in a test helper before the types were tightened.",
    "error-code": "The endpoint answers with error code {tok} on an expired token.",
    "decision": "Decision {tok} from the discussion stays in force.",
}


def decoy_sentence(use: DecoyUse, lang: Language) -> str:
    """A neutral sentence carrying a decoy: no status word sits next to the token."""
    if use.kind == "screen":
        return lang.screen.format(screen=pick(SCREENS, use.seed), tok=use.token)
    if use.kind == "pattern":
        return lang.pattern.format(tok=use.token)
    if lang is not EN:
        return lang.generic.format(tok=use.token)
    if use.kind == "standard":
        return dict(STANDARDS)[use.token].format(tok=use.token)
    return ENGLISH_DECOY_SENTENCES[use.kind].format(tok=use.token)


def path_sentence(path: str, lang: Language, seed: int, index: int) -> str:
    template = pick(lang.path_prose, seed, index)
    if "`{path}`" not in template and (" " in path or path.startswith("*")):
        template = template.replace("{path}", "`{path}`")
    return template.format(path=path)


def mention_sentence(mention: IdMention, lang: Language) -> str:
    bank = lang.done if mention.tone == "done" else lang.partial
    return pick(bank, mention.seed).format(id=mention.req_id)


def thing_sentence(bank: Sequence[str], lang: Language, seed: int, index: int) -> str:
    text = pick(bank, seed, index).format(thing=pick(lang.things, seed // 13, index + 1))
    return text[:1].upper() + text[1:]


def status_word(status: str, seed: int) -> str:
    return {
        "complete": pick(("Complete", "Complete", "COMPLETE ✓"), seed),
        "partial": "Partial",
        "warnings": "Complete with Warnings (one flaky test quarantined)",
        "failed": "Failed",
    }[status]


def status_line(plan: PlanSpec) -> list[str]:
    word = status_word(plan.status, plan.seed)
    return {
        "bold": [f"**Status:** {word}", ""],
        "bold-outside": [f"**Status**: {word}", ""],
        "heading": [f"## Status: {word}", ""],
        "blockquote": [f"> **Status**: {word}", ""],
        "trailing": [f"**Status:** {word}  ", ""],
        "frontmatter": [],
        "none": [],
    }[plan.status_style]


def plan_label(plan: PlanSpec) -> str:
    return plan.plan_id or "01"


def summary_title(spec: PhaseSpec, plan: PlanSpec) -> str:
    tok = phase_token(spec.layout.phase_number)
    number = spec.layout.phase_number
    label = plan_label(plan)
    short = label.lstrip("0") or "0"
    if not plan.plan_id:
        options = (f"# Phase {number}: {plan.title} Summary", f"# {tok} Summary: {plan.title}")
    else:
        options = {
            "gsd": (
                f"# Phase {number} Plan {short}: {plan.title} Summary",
                f"# Phase {tok} Plan {label}: {plan.title} Summary",
                f"# {tok}-{label} Summary: {plan.title}",
            ),
            "legion": (
                f"# Plan {tok}-{label} Summary: {plan.title}",
                f"# Plan {tok}-{label} Summary — {plan.title}",
                f"# Plan {tok}-{label} Summary",
            ),
            "freeform": (
                f"# Phase {tok}-{label} SUMMARY: {plan.title}",
                f"# Summary: {tok}-{label} {plan.title}",
                f"# Plan {label}: {plan.title}",
            ),
            "tiny": (f"# Plan {label}: {plan.title}", f"# {plan.title}"),
        }[plan.style]
    return pick(options, plan.seed)


# Frontmatter ----------------------------------------------------------------------------------


def dressed_yaml_entry(entry: PathEntry, flow: bool) -> str:
    """One path entry of a YAML list, with its note (`— note`, `(note)`, `# note`) if any."""
    path, note = entry.path, entry.note
    if flow:
        style = entry.note_style % 3
        if style == 1 and note and " " not in path:
            return yaml_scalar(f"{path} ({note})", True)
        return yaml_scalar(path, True, force_quotes=style == 2)
    style = entry.note_style
    if style == 1 and note:
        return yaml_scalar(f"{path} — {note}", False)
    if style == 2 and note and " " not in path:
        return yaml_scalar(f"{path} ({note})", False, force_quotes=True)
    if style == 3 and note:
        return f"{yaml_scalar(path, False)}  # {note}"
    return yaml_scalar(path, False, force_quotes=style >= 4, single=style == 5)


def yaml_entries(key: str, entries: Sequence[PathEntry], flow: bool, indent: str) -> list[str]:
    if flow or not entries:
        return [f"{indent}{key}: [{', '.join(dressed_yaml_entry(e, True) for e in entries)}]"]
    return [f"{indent}{key}:"] + [f"{indent}  - {dressed_yaml_entry(e, False)}" for e in entries]


def frontmatter_file_list(fl: FileList) -> list[str]:
    flow = fl.style == "flow"
    if fl.kind == "fm-flat":
        return yaml_entries(fl.key, fl.entries, flow, "")
    return [
        f"{fl.key}:",
        *yaml_entries("created", fl.entries[: fl.split], flow, "  "),
        *yaml_entries("modified", fl.entries[fl.split :], flow, "  "),
    ]


def frontmatter_requirements(plan: PlanSpec) -> list[str]:
    ids = list(dict.fromkeys(m.req_id for m in plan.mentions if m.channel == "fm"))
    key = plan.req_key
    if not ids:
        comment = "  # no product requirement closed by this plan" if plan.seed % 3 == 0 else ""
        return [f"{key}: []{comment}"]
    if plan.req_style == "flow":
        return [f"{key}: [{', '.join(yaml_scalar(i, True) for i in ids)}]"]
    if plan.req_style == "quoted":
        return [f"{key}:"] + [f'  - "{i}"' for i in ids]
    if plan.req_style == "commented":
        lang = LANG[plan.language]
        notes = [pick(lang.notes, plan.seed, n) for n in range(len(ids))]
        return [f"{key}:"] + [
            f"  - {yaml_scalar(i, False)}  # {c}" for i, c in zip(ids, notes, strict=True)
        ]
    return [f"{key}:"] + [f"  - {yaml_scalar(i, False)}" for i in ids]


def decision_texts(plan: PlanSpec) -> list[str]:
    lang = LANG[plan.language]
    return [thing_sentence(lang.decide, lang, plan.seed, i) for i in range(1 + plan.n_tasks // 4)]


def decision_decoys(plan: PlanSpec) -> list[DecoyUse]:
    return [u for u in plan.decoys if u.where == "decisions"]


def frontmatter_decisions(plan: PlanSpec) -> list[str]:
    texts = decision_texts(plan)
    decoys = decision_decoys(plan)
    if plan.decisions_style == "fm-strings":
        values = [f"{u.token}: {texts[n % len(texts)]}" for n, u in enumerate(decoys)] + texts
        return ["key-decisions:"] + [f"  - {yaml_quote(v, False)}" for v in values]
    if plan.decisions_style == "fm-dicts":
        lines = ["decisions:"]
        for n, use in enumerate(decoys):
            lines += [
                f"  - id: {use.token}",
                f"    summary: {yaml_quote(texts[n % len(texts)], False)}",
            ]
        for text in texts:
            lines += [
                f"  - decision: {yaml_quote(text, False)}",
                f"    rationale: {yaml_quote(LANG[plan.language].because, False)}",
            ]
        return lines
    return []


def frontmatter_phase_value(spec: PhaseSpec, plan: PlanSpec) -> str:
    if plan.seed % 4 == 3:
        return spec.layout.phase_number  # `phase: 13`: a bare number, as some projects write it
    return yaml_scalar(phase_folder_name(spec), False)


def render_frontmatter(spec: PhaseSpec, plan: PlanSpec) -> list[str]:
    if plan.frontmatter == "none":
        return []
    lang = LANG[plan.language]
    label = plan_label(plan)
    lines = ["---", f"phase: {frontmatter_phase_value(spec, plan)}"]
    lines.append(f'plan: "{label}"' if plan.seed % 2 else f"plan: {label}")
    if plan.status_style == "frontmatter":
        lines.append(f"status: {plan.status}")
    if plan.frontmatter == "full":
        tags = dict.fromkeys(pick(SUBSYSTEMS, plan.seed, i) for i in range(3))
        lines += [f"subsystem: {pick(SUBSYSTEMS, plan.seed)}", f"tags: [{', '.join(tags)}]"]
        lines += ["", "# Dependency graph"] if plan.seed % 2 else []
        lines += ["requires: []", "provides:"]
        lines += [f"  - {yaml_quote(pick(lang.things, plan.seed, i), False)}" for i in range(2)]
        tech = pick(("tech-stack", "tech_stack"), plan.seed, 7)
        pattern = yaml_quote(thing_sentence(lang.decide, lang, plan.seed, 9), False)
        lines += [f"{tech}:", "  added: []", "  patterns:", f"    - {pattern}"]
    for fl in plan.file_lists:
        if fl.kind.startswith("fm"):
            lines += frontmatter_file_list(fl)
    lines += frontmatter_decisions(plan)
    lines += frontmatter_requirements(plan)
    if plan.frontmatter == "full":
        lines += ["", "# Metrics"] if plan.seed % 2 else []
        lines += [f"duration: {plan.seed % 50 + 2}min", f"completed: {date_from(plan.seed)}"]
    else:
        lines += ["metrics:", f'  duration: "~{plan.seed % 50 + 2}min"']
        lines += [f'  completed: "{date_from(plan.seed)}"']
    return [*lines, "---", ""]


# Body sections --------------------------------------------------------------------------------


def ticked(path: str) -> str:
    return f"`{path}`"


BULLET_HEADS = {
    "tick-dash": "- `{p}`",
    "tick-emdash": "- `{p}`",
    "bold-colon": "- **{p}**",
    "bare-emdash": "- {p}",
    "bare": "- {p}",
    "tick-new": "- `{p}` (new)",
    "tick-only": "- `{p}`",
    "star": "* `{p}`",
}
BULLET_TAILS = {
    "tick-dash": " - {n}",
    "tick-emdash": " — {n}",
    "bold-colon": ": {n}",
    "bare-emdash": " — {n}",
    "star": " — {n}",
    "tick-new": " — {n}",
}


def bullet_entry(entry: PathEntry, shape: str) -> str:
    """One bullet of a body file list; paths a careful writer would quote get backticks."""
    if (" " in entry.path or entry.path.startswith("*")) and shape in ("bare-emdash", "bare"):
        shape = "tick-emdash"
    if "*" in entry.path and shape == "bold-colon":
        shape = "tick-dash"
    head = BULLET_HEADS[shape].format(p=entry.path)
    tail = BULLET_TAILS.get(shape, "") if entry.note else ""
    return head + tail.format(n=entry.note)


def body_file_list(fl: FileList, plan: PlanSpec) -> list[str]:
    lang = LANG[plan.language]
    heading = [f"## {fl.key}", ""]
    notes = [e.note or pick(lang.notes, plan.seed, n) for n, e in enumerate(fl.entries)]
    if fl.kind == "body-bullets":
        return heading + [bullet_entry(e, fl.style) for e in fl.entries]
    if fl.kind == "body-table":
        if fl.style == "three-columns":
            rows = [
                (ticked(e.path), str(20 + (plan.seed + n) % 300), notes[n])
                for n, e in enumerate(fl.entries)
            ]
            return heading + table(("File", "Lines", "Purpose"), rows)
        cell = ticked if fl.style == "ticked" else str
        rows2 = [(cell(e.path), notes[n]) for n, e in enumerate(fl.entries)]
        return heading + table(headings_of(plan).table, rows2)
    if fl.kind == "body-lines":
        created, modified = fl.entries[: fl.split], fl.entries[fl.split :]
        lines = ["**Created:** " + ", ".join(ticked(e.path) for e in created)] if created else []
        if modified:
            lines.append("**Modified:** " + ", ".join(ticked(e.path) for e in modified))
        return lines
    if fl.kind == "body-fenced":
        return [*heading, "```", *(e.path for e in fl.entries), "```"]
    lines = heading[:]
    for n, entry in enumerate(fl.entries, 1):
        plain_bold = "*" not in entry.path and " " not in entry.path
        shown = f"**{entry.path}**" if plain_bold else ticked(entry.path)
        lines += [f"{n}. {shown}", f"   - {notes[n - 1]}"]
    return lines


def accomplishment_lines(plan: PlanSpec, lang: Language) -> list[str]:
    """Deliverable bullets with prose paths, prose id mentions and decoys woven in."""
    count = max(2, min(plan.n_tasks, 8))
    lines = [f"- {thing_sentence(lang.deliver, lang, plan.seed, i)}" for i in range(count)]
    lines += [f"- {path_sentence(p, lang, plan.seed, i)}" for i, p in enumerate(plan.prose_paths)]
    lines += [f"- {mention_sentence(m, lang)}" for m in plan.mentions if m.channel == "prose"]
    lines += [f"- {decoy_sentence(u, lang)}" for u in plan.decoys if u.where == "deliverables"]
    return lines


def body_requirement_line(plan: PlanSpec) -> list[str]:
    ids = list(dict.fromkeys(m.req_id for m in plan.mentions if m.channel == "body-line"))
    if not ids:
        return []
    style = plan.body_line_style
    shown = ", ".join(ids)
    if style == "annotated":
        shown = ", ".join([f"{ids[0]} ({pick(EN.notes, plan.seed)})", *ids[1:]])
    label = {
        "bold-inside": "**Requirement:**" if len(ids) == 1 else "**Requirements:**",
        "bold-outside": "**Requirements**:",
        "plain": "Requirements:",
        "annotated": "**Requirements**:",
    }[style]
    return [f"{label} {shown}", ""]


ENGLISH_COVERED = (
    "Requirements Covered",
    "Requirements Satisfied",
    "Requirements Addressed",
    "Requirements Completed",
    "Requirements Implemented",
)


def covered_line(m: IdMention, style: str, what: str) -> str:
    partial = m.tone == "partial"
    suffix = " (partial)" if partial else ""
    return {
        "colon": f"- {m.req_id}: {what}{suffix}",
        "check": f"- {'◐' if partial else '✓'} {m.req_id}: {what}{suffix}",
        "bold-dash": f"- **{m.req_id}** — {what}{suffix}",
        "box": f"- [{' ' if partial else 'x'}] {m.req_id} — {what}{suffix}",
    }[style]


def covered_section(plan: PlanSpec) -> list[str]:
    mentions = [m for m in plan.mentions if m.channel == "covered"]
    if not mentions:
        return []
    lang = LANG[plan.language]
    english = pick(ENGLISH_COVERED, plan.seed, 11)
    lines = [f"## {headings_of(plan).covered if plan.translate_headings else english}", ""]
    if plan.covered_style == "table":
        rows = [
            (m.req_id, "Complete" if m.tone == "done" else "Partial", pick(lang.things, m.seed))
            for m in mentions
        ]
        return lines + table(("Requirement", "Status", "Notes"), rows)
    return lines + [
        covered_line(m, plan.covered_style, pick(lang.things, m.seed)) for m in mentions
    ]


def decisions_section(plan: PlanSpec, lang: Language, hl: Language) -> list[str]:
    if plan.decisions_style not in ("body-list", "body-table"):
        return []
    texts = decision_texts(plan)
    decoys = decision_decoys(plan)
    lines = [f"## {hl.decisions}", ""]
    if plan.decisions_style == "body-table":
        rows = [
            (f"{u.token} — {texts[n % len(texts)]}", lang.because) for n, u in enumerate(decoys)
        ]
        rows += [(t, lang.because) for t in texts]
        return lines + table(hl.decision_table, rows)
    lines += [f"- **{u.token}**: {texts[n % len(texts)]}" for n, u in enumerate(decoys)]
    return lines + [f"- {t}" for t in texts]


def deviations_section(plan: PlanSpec, lang: Language, hl: Language) -> list[str]:
    decoys = [u for u in plan.decoys if u.where == "deviations"]
    lines = [f"## {hl.deviations}", ""]
    if not decoys and plan.seed % 3 == 0:
        return [*lines, "None - plan executed exactly as written." if lang is EN else lang.none]
    lines.append(f"- {pick(lang.deviate, plan.seed)}")
    return lines + [f"- {decoy_sentence(u, lang)}" for u in decoys]


def verification_section(plan: PlanSpec, lang: Language, hl: Language) -> list[str]:
    n = plan.n_tasks + 2
    lines = [f"## {hl.verification}", ""]
    lines += [f"- {pick(lang.verify, plan.seed, i).format(n=n)}" for i in range(2)]
    lines += [f"- {decoy_sentence(u, lang)}" for u in plan.decoys if u.where == "verification"]
    if plan.style == "legion":
        commands = [
            ('`npm test -- --grep "parse\\|render"`', "0", "pass"),
            ("`ruff check .`", "0", "pass"),
        ]
        lines += [
            "",
            "## Verification Commands",
            "",
            *table(("Command", "Exit Code", "Result"), commands),
        ]
    return lines


def task_lines(plan: PlanSpec) -> list[str]:
    lines = []
    for i in range(plan.n_tasks):
        what = f"{pick(TASK_VERBS, plan.seed, i)} {pick(TASK_OBJECTS, plan.seed // 5, i)}"
        if plan.style == "legion":
            lines.append(f"- [x] Task {i + 1}: {what}")
        else:
            lines.append(
                f"{i + 1}. **Task {i + 1}: {what}** - `{commit_hash(plan.seed, i)}` (feat)"
            )
    return lines


def filler_section(plan: PlanSpec, lang: Language, hl: Language) -> list[str]:
    """Long prose that a compactor should trim (what makes a summary reach ~20 KB)."""
    if not plan.filler:
        return []
    lines = [f"## {hl.details}", ""]
    for p in range(plan.filler):
        bank = lang.deliver + lang.decide
        sentences = [thing_sentence(bank, lang, plan.seed + p, s) for s in range(6)]
        if plan.size == "large":
            lines += [
                f"### {pick(TASK_VERBS, plan.seed, p)} {pick(TASK_OBJECTS, plan.seed, p)}",
                "",
            ]
        lines += [" ".join(sentences), ""]
    return lines


def tiny_summary(spec: PhaseSpec, plan: PlanSpec) -> list[str]:
    lang = LANG[plan.language]
    parts = [thing_sentence(lang.deliver, lang, plan.seed, 0)]
    parts += [mention_sentence(m, lang) for m in plan.mentions]
    parts += [path_sentence(p, lang, plan.seed, 1) for p in plan.prose_paths]
    return [summary_title(spec, plan), "", " ".join(parts)]


def summary_head(spec: PhaseSpec, plan: PlanSpec, lang: Language) -> list[str]:
    lines = [summary_title(spec, plan), ""]
    if plan.style == "legion":
        lines += ["## Result", ""]
    lines += status_line(plan)
    if plan.style == "legion":
        lines += [f"**Wave**: {plan.seed % 3 + 1}", f"**Agent**: {pick(AGENTS, plan.seed)}"]
        lines += [f"**Completed**: {date_from(plan.seed)}", ""]
    if plan.style == "gsd":
        lines += [f"**{thing_sentence(lang.deliver, lang, plan.seed, 5)}**", ""]
    lines += body_requirement_line(plan)
    if plan.style == "gsd":
        lines += ["## Performance", "", f"- **Duration:** {plan.seed % 50 + 2} min"]
        lines += [f"- **Tasks:** {plan.n_tasks}", ""]
    return lines


def summary_body(spec: PhaseSpec, plan: PlanSpec) -> list[str]:
    lang = LANG[plan.language]
    hl = headings_of(plan)
    lines = summary_head(spec, plan, lang)
    heading = hl.built if plan.style == "freeform" else hl.accomplishments
    lines += [f"## {heading}", "", *accomplishment_lines(plan, lang), ""]
    if plan.n_tasks:
        tasks = "Completed Tasks" if plan.style == "legion" else hl.tasks
        lines += [f"## {tasks}", "", *task_lines(plan), ""]
    for fl in plan.file_lists:
        if not fl.kind.startswith("fm"):
            lines += [*body_file_list(fl, plan), ""]
    lines += [*decisions_section(plan, lang, hl), ""]
    lines += [*deviations_section(plan, lang, hl), ""]
    lines += [f"## {hl.issues}", "", lang.none, ""]
    lines += [*covered_section(plan), ""]
    lines += [*verification_section(plan, lang, hl), ""]
    lines += filler_section(plan, lang, hl)
    return lines + summary_footer(spec, plan, lang)


def summary_footer(spec: PhaseSpec, plan: PlanSpec, lang: Language) -> list[str]:
    if plan.status == "failed":
        return [
            "## Error Details",
            "",
            thing_sentence(lang.deviate + lang.decide, lang, plan.seed, 2),
        ]
    if plan.style == "legion":
        return ["## Handoff Context", "", f"- **Key outputs**: {pick(lang.things, plan.seed)}"]
    if plan.style == "freeform":
        return [
            "## Self-Check: PASSED",
            "",
            f"- [x] {thing_sentence(lang.deliver, lang, plan.seed, 3)}",
        ]
    return [
        "## Self-Check: PASSED",
        "",
        "---",
        f"*Phase: {phase_folder_name(spec)}*",
        f"*Completed: {date_from(plan.seed)}*",
    ]


def render_summary(spec: PhaseSpec, plan: PlanSpec) -> str:
    if plan.style == "tiny":
        return finish_text(tiny_summary(spec, plan), plan.crlf, plan.bom)
    lines = render_frontmatter(spec, plan) + summary_body(spec, plan)
    return finish_text(lines, plan.crlf, plan.bom)


# PLAN files -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanFileContent:
    plan_id: str
    title: str
    ids: tuple[str, ...]
    paths: tuple[str, ...]
    decoys: tuple[DecoyUse, ...]
    key: str
    seed: int


def render_plan_file(spec: PhaseSpec, plan: PlanFileContent) -> str:
    lang = LANG[spec.language]
    label = plan.plan_id or "01"
    lines = ["---", f"phase: {yaml_scalar(phase_folder_name(spec), False)}", f"plan: {label}"]
    lines += ["type: execute", f"wave: {plan.seed % 3 + 1}", "depends_on: []"]
    lines += yaml_list("files_modified", [yaml_scalar(p, False) for p in plan.paths], flow=False)
    lines += ["autonomous: true", *yaml_list(plan.key, list(plan.ids), flow=plan.seed % 2 == 0)]
    lines += ["---", "", f"# Plan {label}: {plan.title}", "", "<objective>"]
    lines += [thing_sentence(lang.deliver, lang, plan.seed, 0)]
    lines += [decoy_sentence(u, lang) for u in plan.decoys]
    lines += ["</objective>", "", "<tasks>"]
    for i in range(1 + plan.seed % 3):
        name = f"Task {i + 1}: {pick(TASK_VERBS, plan.seed, i)} {pick(TASK_OBJECTS, plan.seed, i)}"
        lines += ['<task type="auto">', f"  <name>{name}</name>"]
        if plan.paths:
            lines.append(f"  <files>{pick(plan.paths, plan.seed, i)}</files>")
        lines += [
            f"  <action>{thing_sentence(lang.deliver, lang, plan.seed, i + 1)}</action>",
            "</task>",
        ]
    return finish_text([*lines, "</tasks>"])


def plan_file_contents(spec: PhaseSpec) -> list[tuple[str, PlanFileContent]]:
    """(file name, content) of every PLAN file, the gap plan's included."""
    out = []
    for plan in spec.plans:
        body_decoys = tuple(u for u in plan.decoys if u.where == "plan-body")
        content = PlanFileContent(
            plan.plan_id,
            plan.title,
            plan.plan_file_ids,
            plan.plan_file_paths,
            body_decoys,
            plan.plan_req_key,
            plan.seed,
        )
        out += [(name, content) for name in plan.plan_files]
    gap = PlanFileContent(
        spec.gap_plan_id, spec.name, spec.gap_ids, (), (), "requirements", spec.seed
    )
    out += [(name, gap) for name in spec.gap_plan_files]
    return out


# Distractors ----------------------------------------------------------------------------------


def distractor_title(spec: PhaseSpec, kind: str) -> str:
    number = roadmap_number(spec.layout)
    return {
        "CONTEXT": f"# Phase {number}: {spec.name} - Context",
        "RESEARCH": f"# Phase {number}: {spec.name} - Research",
        "VERIFICATION": f"# Phase {number}: {spec.name} Verification Report",
        "PLAN-VERIFICATION": f"# Plan Verification: {spec.name}",
        "VALIDATION": f"# Phase {number}: Validation Strategy",
        "UAT": f"# Phase {number}: User Acceptance Testing",
        "REVIEW": f"# Phase {number}: {spec.name} — Review Summary",
        "PLANNING-SUMMARY": "# Planning Summary",
        "CLOSEOUT-SUMMARY": f"# Phase {number} Closeout Summary",
        "deferred-items": "# Deferred Items",
        "evidence": "# Run notes",
    }[kind]


def distractor_frontmatter(spec: PhaseSpec, d: DistractorSpec) -> list[str]:
    phase = f"phase: {yaml_scalar(phase_folder_name(spec), False)}"
    if d.kind in ("VERIFICATION", "PLAN-VERIFICATION"):
        return ["---", phase, "status: passed", "score: 4/4 must-haves verified", "---", ""]
    if d.kind == "CLOSEOUT-SUMMARY":
        paths = [yaml_scalar(p, False) for p in d.paths]
        return [
            "---",
            phase,
            "plan: closeout",
            *yaml_list("requirements-completed", list(d.ids), flow=True),
            "key-files:",
            *yaml_list("modified", paths, flow=False, indent="  "),
            "---",
            "",
        ]
    return []


def render_distractor(spec: PhaseSpec, d: DistractorSpec) -> str:
    """A non-summary file of the phase folder: it cites ids, decoys and paths too."""
    if d.kind == "gitkeep":
        return ""
    lang = LANG[spec.language]
    lines = distractor_frontmatter(spec, d)
    lines += [distractor_title(spec, d.kind), "", f"**Gathered:** {date_from(d.seed)}", ""]
    lines += [thing_sentence(lang.deliver, lang, d.seed, 0), ""]
    if d.ids and d.kind in ("VERIFICATION", "PLAN-VERIFICATION"):
        rows = [(i, "SATISFIED", pick(lang.things, d.seed, n)) for n, i in enumerate(d.ids)]
        lines += [
            "## Requirements Coverage",
            "",
            *table(("Requirement", "Status", "Evidence"), rows),
            "",
        ]
    elif d.ids:
        lines += [f"Scope: {', '.join(d.ids)}.", ""]
    lines += [lang.pattern.format(tok=f) for f in d.foreign_ids]
    lines += [decoy_sentence(u, lang) for u in d.decoys]
    if d.paths and d.kind != "CLOSEOUT-SUMMARY":
        lines += ["", "## Canonical References", "", *(f"- `{p}`" for p in d.paths)]
    return finish_text(lines)


# ROADMAP --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoadmapEntry:
    number: str
    name: str
    ids: tuple[str, ...]
    annotations: tuple[str, ...]
    plans: tuple[str, ...]
    milestone: str
    ours: bool


def our_roadmap_entry(spec: PhaseSpec) -> RoadmapEntry | None:
    layout = spec.layout
    if not layout.roadmap_lists_phase:
        return None
    plans = tuple(p.plan_files[0] if p.plan_files else p.summary_name for p in spec.plans)
    milestone = layout.milestone
    if layout.sibling == "same-folder":
        milestone = layout.current_milestone
    rm = spec.roadmap
    return RoadmapEntry(
        layout.phase_number, spec.name, rm.own_ids, rm.annotations, plans, milestone, True
    )


def foreign_roadmap_entries(spec: PhaseSpec) -> list[RoadmapEntry]:
    return [
        RoadmapEntry(f.number, f.name, f.ids, ("",) * len(f.ids), (), f.milestone, False)
        for f in spec.foreign
    ]


def roadmap_files(spec: PhaseSpec) -> dict[str, str]:
    """The live ROADMAP and the milestone archives, each with the entries that belong to it."""
    layout = spec.layout
    ours = our_roadmap_entry(spec)
    own = [ours] if ours else []
    foreign = foreign_roadmap_entries(spec)
    if layout.container != "milestone":
        return {".planning/ROADMAP.md": render_roadmap(spec, foreign + own, (), "")}
    archived = [e for e in foreign if e.milestone == layout.milestone] + own
    current = [e for e in foreign if e.milestone == layout.current_milestone]
    files = {
        f".planning/milestones/{layout.milestone}-ROADMAP.md": render_roadmap(
            spec, archived, (), layout.milestone
        ),
        ".planning/ROADMAP.md": render_roadmap(spec, current, archived, layout.current_milestone),
    }
    if layout.sibling == "other-milestone":
        other = [e for e in foreign if e.milestone == layout.other_milestone]
        path = f".planning/milestones/{layout.other_milestone}-ROADMAP.md"
        files[path] = render_roadmap(spec, other, (), layout.other_milestone)
    return files


def number_key(number: str) -> tuple[int, ...]:
    return tuple(int(x) for x in number.split("."))


def shown_number(spec: PhaseSpec, entry: RoadmapEntry) -> str:
    return phase_token(entry.number) if spec.layout.roadmap_number_padded else entry.number


def requirement_value(entry: RoadmapEntry, rm: RoadmapSpec) -> str:
    if not entry.ids:
        return rm.empty_marker
    pairs = zip(entry.ids, entry.annotations, strict=True)
    return ", ".join(f"{i} {a}" if a else i for i, a in pairs)


def render_roadmap(
    spec: PhaseSpec,
    entries: Sequence[RoadmapEntry],
    shipped: Sequence[RoadmapEntry],
    milestone: str,
) -> str:
    rm = spec.roadmap
    lang = LANG[spec.language]
    ordered = sorted(entries, key=lambda e: (e.milestone, number_key(e.number), e.name))
    lines = [f"# Roadmap: {spec.project}", ""]
    lines += [f"**Milestone:** {milestone}", ""] if milestone else []
    lines += ["## Overview", "", thing_sentence(lang.deliver, lang, rm.seed, 0), ""]
    if shipped:
        lines += ["<details>", "<summary>Shipped milestone (archived)</summary>", ""]
        for e in sorted(shipped, key=lambda e: number_key(e.number)):
            lines.append(f"- [x] Phase {e.number}: {e.name} ({len(e.plans) or 1} plans)")
        lines += ["", "</details>", ""]
    if rm.style == "checklist":
        return finish_text(lines + checklist_roadmap(spec, ordered), rm.crlf)
    lines += ["## Phases", ""]
    for n, e in enumerate(ordered):
        lines.append(
            f"- [x] **Phase {shown_number(spec, e)}: {e.name}** - {pick(lang.things, rm.seed, n)}"
        )
    lines += ["", "## Phase Details", ""]
    section = None
    several = len({e.milestone for e in ordered}) > 1
    for e in ordered:
        if several and e.milestone != section:
            lines += [f"## Milestone {e.milestone}", ""]
            section = e.milestone
        lines += detail_block(spec, e)
    rows = [
        (
            f"{shown_number(spec, e)}. {e.name}",
            f"{len(e.plans) or 2}/{len(e.plans) or 2}",
            "Complete",
            date_from(rm.seed),
        )
        for e in ordered
    ]
    lines += ["## Progress", "", *table(("Phase", "Plans Complete", "Status", "Completed"), rows)]
    return finish_text(lines, rm.crlf)


def detail_block(spec: PhaseSpec, e: RoadmapEntry) -> list[str]:
    rm = spec.roadmap
    lang = LANG[spec.language]
    value = requirement_value(e, rm)
    goal = thing_sentence(lang.deliver, lang, rm.seed, len(e.name))
    if e.ours:
        goal = " ".join([goal, *(decoy_sentence(u, lang) for u in rm.decoys)])
    inserted = " (INSERTED)" if "." in e.number and rm.seed % 2 else ""
    heading = f"### Phase {shown_number(spec, e)}: {e.name}{inserted}"
    if rm.style == "blockquote":
        lines = [heading.replace("### ", "## ", 1), f"> **{lang.goal}**: {goal}"]
        lines += [f"> {rm.label} {value}"] if value else []
        return [*lines, "", f"- {pick(lang.things, rm.seed, 2)}", ""]
    depends = "Nothing" if rm.seed % 2 else "the previous phase"
    lines = [heading, f"**Goal**: {goal}", f"**Depends on**: {depends}"]
    lines += [f"{rm.label} {value}"] if value else []
    if rm.style == "legion":
        lines.append(f"**Recommended Agents**: {pick(AGENTS, rm.seed)}, {pick(AGENTS, rm.seed, 1)}")
    lines += [
        "**Success Criteria** (what must be TRUE):",
        f"  1. {thing_sentence(lang.deliver, lang, rm.seed, 3)}",
    ]
    lines += [f"**Plans**: {len(e.plans) or 2} plans", ""]
    if e.plans:
        lines += ["Plans:", *(f"- [x] {p}" for p in e.plans), ""]
    return lines


def checklist_roadmap(spec: PhaseSpec, ordered: Sequence[RoadmapEntry]) -> list[str]:
    rm = spec.roadmap
    lang = LANG[spec.language]
    lines = ["## Phases", ""]
    several = len({e.milestone for e in ordered}) > 1
    section = None
    for n, e in enumerate(ordered):
        if several and e.milestone != section:
            lines += ["", f"### Milestone {e.milestone}", ""]
            section = e.milestone
        lines.append(
            f"- [x] **Phase {shown_number(spec, e)}: {e.name}** — {pick(lang.things, rm.seed, n)}"
        )
        value = requirement_value(e, rm)
        lines += [f"  - {rm.label} {value}"] if value else []
        lines += [f"  - {decoy_sentence(u, lang)}" for u in rm.decoys] if e.ours else []
        lines.append(f"  - Plans: {len(e.plans) or 2}")
    return lines


# REQUIREMENTS.md ------------------------------------------------------------------------------


def requirements_files(
    spec: PhaseSpec, passed: frozenset[str], unfinished: frozenset[str]
) -> dict[str, str]:
    doc = spec.requirements_doc
    if doc is None:
        return {}
    layout = spec.layout
    foreign = [(f, i) for f in spec.foreign for i in f.ids]
    if doc.location == "top":
        text = render_requirements(spec, doc, foreign, passed, unfinished, with_own=True)
        return {".planning/REQUIREMENTS.md": text}
    here = [(f, i) for f, i in foreign if f.milestone == layout.milestone]
    rest = [(f, i) for f, i in foreign if f.milestone != layout.milestone]
    path = f".planning/milestones/{layout.milestone}-REQUIREMENTS.md"
    files = {path: render_requirements(spec, doc, here, passed, unfinished, with_own=True)}
    if rest:
        files[".planning/REQUIREMENTS.md"] = render_requirements(
            spec, doc, rest, passed, unfinished, False
        )
    return files


def render_requirements(
    spec: PhaseSpec,
    doc: RequirementsDocSpec,
    foreign: Sequence[tuple[ForeignPhase, str]],
    passed: frozenset[str],
    unfinished: frozenset[str],
    with_own: bool,
) -> str:
    """`- [x] **ID**: text` definitions of this phase's and other phases' ids."""
    lang = LANG[spec.language]
    own_number = roadmap_number(spec.layout)
    rows: list[tuple[str, bool, str]] = []
    if with_own:
        rows += [
            (i, i in passed or (i not in unfinished and doc.seed % 2 == 0), own_number)
            for i in doc.own_ids
        ]
    rows += [(i, bool((doc.seed + n) % 2), f.number) for n, (f, i) in enumerate(foreign)]
    lines = [f"# Requirements: {spec.project}", "", f"**Defined:** {date_from(doc.seed)}", ""]
    lines += ["## v1 Requirements", ""]
    for n, (req_id, checked, _) in enumerate(sorted(rows)):
        text = thing_sentence(lang.deliver, lang, doc.seed, n)
        box = "x" if checked else " "
        lines.append(
            {
                "checkbox": f"- [{box}] **{req_id}**: {text}",
                "bold": f"- **{req_id}**: {text}",
                "dash": f"- [{box}] **{req_id}** — {text}",
            }[doc.style]
        )
    if with_own and doc.decoys:
        lines += ["", " ".join(decoy_sentence(u, lang) for u in doc.decoys)]
    # a definition alone declares nothing for a phase: the ids this phase's summaries mention
    # only in prose are mapped to it by a traceability row (other phases' rows when wanted, never
    # one that carries this phase's number: numbers restart per milestone)
    trace = [(i, f"Phase {own_number}", "Complete" if c else "Pending")
             for i, c, _ in rows if with_own and i in doc.traced]  # fmt: skip
    if doc.traceability:
        trace += [(i, f"Phase {num}", "Complete" if c else "Pending") for i, c, num in rows
                  if i not in doc.own_ids and num != own_number]  # fmt: skip
    if trace:
        lines += ["", "## Traceability", "", *table(("Requirement", "Phase", "Status"), trace)]
    return finish_text(lines)


# Other phases' folders and STATE.md -----------------------------------------------------------


def foreign_summary(f: ForeignPhase) -> str:
    tok = phase_token(f.number)
    lines = ["---", f"phase: {tok}-{f.slug}", "plan: 01", "key-files:"]
    lines += yaml_list(
        "modified", [yaml_scalar(p, False) for p in f.paths], flow=False, indent="  "
    )
    lines += yaml_list("requirements-completed", list(f.ids), flow=True)
    lines += ["---", "", f"# Phase {f.number} Plan 1: {f.name} Summary", ""]
    lines += [f"- {EN.deliver[0].format(thing=EN.things[0])}"]
    return finish_text(lines)


def state_file(spec: PhaseSpec) -> str:
    total = len(spec.foreign) + 1
    lines = ["# Project State", "", "## Current Position", ""]
    lines += [
        f"- **Phase**: {roadmap_number(spec.layout)} of {total} (complete)",
        "- **Status**: Complete",
    ]
    return finish_text(lines)


# ---------------------------------------------------------------------------------------------
# The truth, computed from the spec alone.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    declared: frozenset[str]
    reported: frozenset[str]
    decoys: frozenset[str]
    listed: tuple[str, ...]
    prose_only: tuple[str, ...]
    passed: frozenset[str]
    unfinished: frozenset[str]
    foreign_ids: frozenset[str]
    foreign_paths: tuple[str, ...]
    distractor_only: tuple[str, ...]


def compute_truth(spec: PhaseSpec) -> Truth:
    mentions = [(m, p) for p in spec.plans for m in p.mentions]
    reported = frozenset(m.req_id for m, _ in mentions)
    declared = set(reported) | set(spec.gap_ids)
    declared |= {i for p in spec.plans if p.plan_files for i in p.plan_file_ids}
    if spec.layout.roadmap_lists_phase:
        declared |= set(spec.roadmap.own_ids)
    listed = tuple(
        dict.fromkeys(e.path for p in spec.plans for fl in p.file_lists for e in fl.entries)
    )
    prose = dict.fromkeys(x for p in spec.plans for x in p.prose_paths if x not in listed)
    distractor = dict.fromkeys(
        x for d in spec.distractors for x in d.paths if x not in listed and x not in prose
    )
    return Truth(
        declared=frozenset(declared),
        reported=reported,
        decoys=frozenset(decoy_tokens_written(spec)),
        listed=listed,
        prose_only=tuple(prose),
        passed=frozenset(
            i
            for i in reported
            if all(
                m.tone == "done" and p.status == "complete" for m, p in mentions if m.req_id == i
            )
        ),
        unfinished=frozenset(
            i for i in reported if all(m.tone == "partial" for m, _ in mentions if m.req_id == i)
        ),
        foreign_ids=frozenset(i for f in spec.foreign for i in f.ids),
        foreign_paths=tuple(dict.fromkeys(x for f in spec.foreign for x in f.paths)),
        distractor_only=tuple(distractor),
    )


def decoy_tokens_written(spec: PhaseSpec) -> list[str]:
    uses = [u for p in spec.plans for u in p.decoys]
    uses += [u for d in spec.distractors for u in d.decoys]
    uses += list(spec.roadmap.decoys)
    if spec.requirements_doc is not None:
        uses += list(spec.requirements_doc.decoys)
    tokens = [u.token for u in uses]
    ours = our_roadmap_entry(spec)
    entries = foreign_roadmap_entries(spec) + ([ours] if ours else [])
    if spec.roadmap.empty_marker == "TBD" and any(not e.ids for e in entries):
        tokens.append("TBD")
    return tokens


# ---------------------------------------------------------------------------------------------
# Writing.
# ---------------------------------------------------------------------------------------------


def render_files(spec: PhaseSpec) -> dict[str, str]:
    """Every file of the project, by path relative to the root; a pure function of the spec."""
    truth = compute_truth(spec)
    folder = phase_folder(spec)
    parts: list[tuple[str, str]] = []
    parts += [(f"{folder}/{p.summary_name}", render_summary(spec, p)) for p in spec.plans]
    parts += [(f"{folder}/{n}", render_plan_file(spec, c)) for n, c in plan_file_contents(spec)]
    parts += [(f"{folder}/{d.name}", render_distractor(spec, d)) for d in spec.distractors]
    parts += list(roadmap_files(spec).items())
    parts += list(requirements_files(spec, truth.passed, truth.unfinished).items())
    for f in spec.foreign:
        if f.folder:
            parts.append((f"{f.folder}/{phase_token(f.number)}-01-SUMMARY.md", foreign_summary(f)))
    parts.append((".planning/STATE.md", state_file(spec)))
    files = dict(parts)
    if len(files) != len(parts):  # two files at one path would make the truth a lie
        raise ValueError(f"a generated path is used twice in {sorted(files)}")
    return files


def summary_texts(spec: PhaseSpec, files: dict[str, str]) -> list[str]:
    folder = phase_folder(spec)
    return [files[f"{folder}/{p.summary_name}"] for p in spec.plans]


def write_phase(spec: PhaseSpec, root: Path) -> GeneratedPhase:
    """Write the project under `root` (an empty folder) and return the truth about the phase."""
    files = render_files(spec)
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    truth = compute_truth(spec)
    folder = phase_folder(spec)
    summaries = tuple(p.summary_name for p in spec.plans)
    inside = sorted(r[len(folder) + 1 :] for r in files if r.startswith(folder + "/"))
    return GeneratedPhase(
        root=root,
        phase_dir=root / folder,
        phase_arg=folder,
        phase_number=spec.layout.phase_number,
        summary_files=summaries,
        non_summary_files=tuple(n for n in inside if n not in summaries),
        declared_ids=truth.declared,
        reported_ids=truth.reported,
        decoy_ids=truth.decoys,
        listed_paths=truth.listed,
        prose_only_paths=truth.prose_only,
        originals_chars=sum(len(t) for t in summary_texts(spec, files)),
        passed_ids=truth.passed,
        unfinished_ids=truth.unfinished,
        foreign_ids=truth.foreign_ids,
        foreign_paths=truth.foreign_paths,
        distractor_only_paths=truth.distractor_only,
        written_files=tuple(sorted(files)),
    )


# ---------------------------------------------------------------------------------------------
# Self-checks: the recorded truth must be unambiguous in the written text.
# ---------------------------------------------------------------------------------------------


def truth_problems(spec: PhaseSpec, files: dict[str, str]) -> list[str]:
    """Ways the written files could contradict the truth; empty when the spec is sound."""
    truth = compute_truth(spec)
    summaries = summary_texts(spec, files)
    everything = list(files.values())
    problems = []
    for req_id in sorted(truth.reported):
        if not any(occurs_as_id(req_id, t) for t in summaries):
            problems.append(f"reported {req_id} is in no summary")
    for req_id in sorted(truth.declared - truth.reported):
        if any(occurs_as_id(req_id, t) for t in summaries):
            problems.append(f"unreported {req_id} shows in a summary")
    for req_id in sorted(truth.declared):
        if not any(occurs_as_id(req_id, t) for t in everything):
            problems.append(f"declared {req_id} is written nowhere")
    for token in sorted(truth.decoys):
        if not any(occurs_as_id(token, t) for t in everything):
            problems.append(f"decoy {token} is written nowhere")
        if any(related(token, i) for i in truth.declared | truth.foreign_ids):
            problems.append(f"decoy {token} is related to a requirement id")
    for req_id in sorted(truth.foreign_ids):
        if any(occurs_as_id(req_id, t) for t in summaries):
            problems.append(f"foreign {req_id} shows in one of our summaries")
        if any(related(req_id, i) for i in truth.declared):
            problems.append(f"foreign {req_id} is related to a declared id")
    for path in truth.listed:
        if not any(path in t for t in summaries):
            problems.append(f"listed {path} is in no summary")
    problems += [
        f"path {p} both listed and prose-only" for p in truth.prose_only if p in truth.listed
    ]
    return problems


def spec_features(spec: PhaseSpec) -> frozenset[str]:
    """Names of the dimensions a spec reaches, for coverage checks."""
    layout = spec.layout
    features = {
        f"container:{layout.container}",
        f"summary-naming:{layout.summary_naming}",
        f"plan-naming:{layout.plan_naming}",
        f"sibling:{layout.sibling}",
        f"language:{spec.language}",
        f"roadmap:{spec.roadmap.style}",
    }
    features |= {"layout:decimal"} if "." in layout.phase_number else set()
    features |= {"layout:prefixed"} if layout.folder_prefix else set()
    features |= (
        {"layout:letter-suffix"} if any(p.plan_id[-1:].isalpha() for p in spec.plans) else set()
    )
    features |= {"layout:unlisted"} if not layout.roadmap_lists_phase else set()
    features |= {"layout:gap-plan"} if spec.gap_plan_id else set()
    features |= {"layout:unicode-slug"} if not spec.slug.isascii() else set()
    if spec.requirements_doc is not None:
        features.add(f"requirements-doc:{spec.requirements_doc.location}")
    for plan in spec.plans:
        features |= _plan_features(plan)
    features |= {f"distractor:{d.kind}" for d in spec.distractors}
    truth = compute_truth(spec)
    features |= {f"id:{id_shape(i)}" for i in truth.declared}
    features |= path_features(truth.listed)
    features |= {"ids:unreported"} if truth.declared - truth.reported else set()
    features |= {"paths:prose-only"} if truth.prose_only else set()
    features |= {"paths:distractor-only"} if truth.distractor_only else set()
    return frozenset(features)


ID_SHAPE_PATTERNS: tuple[tuple[str, str], ...] = (
    ("phase-local", r"-phase-local$"),
    ("phase-decision", r"^PHASE-\d+-D-[A-C]\d+$"),
    ("versioned", r"^V\d+-"),
    ("req-lower", r"^REQ-[a-z]+-[a-z]+$"),
    ("decimal-k", r"^\d{2}\.\d-K\d$"),
    ("decision", r"^D-\d{2}$"),
    ("r", r"^R\d+$"),
    ("r-dotted", r"^R\d+\.\d$"),
    ("fr-dotted", r"^FR\d+\.\d$"),
    ("nfr", r"^NFR\d+$"),
    ("underscore", r"^(SYNC|API|UI)_\d{2}$"),
    ("prefix-word", r"^(UX|MED|CORE|APP)-[A-Z]+$"),
    ("prefix-number", r"^[A-Z0-9]+(-[A-Z0-9]+)?-\d{2}$"),
)


def id_shape(req_id: str) -> str:
    """Which id shape an id has (ids drawn at random may look like another shape)."""
    return next((name for name, rx in ID_SHAPE_PATTERNS if re.search(rx, req_id)), "random")


def path_shape(path: str) -> str:
    """Which path shape a path has, by the generator's own vocabulary."""
    if unicodedata.normalize("NFC", path) != path:
        return "unicode-nfd"
    fixed = {
        "dotfile": DOTFILES,
        "multi-ext": MULTI_EXT,
        "no-ext": NO_EXT,
        "lock": LOCKS,
        "bundle": BUNDLES,
        "template": TEMPLATES,
        "glob": GLOBS,
        "unicode": UNICODE_PATHS,
        "spaced": SPACED,
        "absolute": ABSOLUTE,
        "odd": ODD,
        "deep": DEEP,
    }
    found = next((name for name, paths in fixed.items() if path in paths), None)
    if found:
        return found
    return "bulk" if re.search(r"_\d{2}\.[a-z]+$", path) else "ordinary"


def path_features(paths: Sequence[str]) -> set[str]:
    features = {f"path:{path_shape(p)}" for p in paths}
    names = [p.rsplit("/", 1)[-1] for p in paths]
    if any(names.count(n) > 1 and "/" in p for p, n in zip(paths, names, strict=True)):
        features.add("path:same-name-two-folders")
    if any("/" not in p and any(q.endswith("/" + p) for q in paths) for p in paths):
        features.add("path:nested-and-bare")
    return features


def _plan_features(plan: PlanSpec) -> set[str]:
    features = {
        f"style:{plan.style}",
        f"size:{plan.size}",
        f"frontmatter:{plan.frontmatter}",
        f"status:{plan.status}",
        f"status-style:{plan.status_style}",
        f"prose-language:{plan.language}",
    }
    if plan.frontmatter != "none" and any(m.channel == "fm" for m in plan.mentions):
        features.add(f"req-key:{plan.req_key}")
        features.add(f"req-style:{plan.req_style}")
    body_lists = [fl for fl in plan.file_lists if not fl.kind.startswith("fm")]
    if body_lists and plan.translate_headings:
        features.add(f"heading-language:{plan.language}")
    elif body_lists:
        features.add("heading-language:en")
    features |= {f"channel:{m.channel}" for m in plan.mentions}
    features |= {f"tone:{m.tone}" for m in plan.mentions}
    features |= {f"list:{fl.kind}" for fl in plan.file_lists}
    features |= {f"list-key:{fl.key}" for fl in plan.file_lists if fl.kind.startswith("fm")}
    features |= {f"decoy:{u.kind}" for u in plan.decoys}
    features |= {"crlf"} if plan.crlf else set()
    features |= {"bom"} if plan.bom else set()
    return features
