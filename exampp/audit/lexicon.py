"""The words of text that addresses an evaluator, by what they mean rather than by language: small
lists of stems in 33 languages for each :data:`CONCEPTS` (who grades, what is graded, a grade,
the top of a scale, "this", an order, an override, a second person, a note, a request).

A stem matches the start of a word ("giudic" matches "giudice", "giudici", "giudicare");
a stem after ``=`` matches a whole word only ("ai", "du"); ``_`` joins two words, the stem's word
and the next ("por_favor", "=du_bist": a word that is another language's common word, read with
the verb after it). Stems of Chinese, Japanese and Thai, written without spaces, match anywhere.
Stems are folded as the text is (:func:`exampp.audit.normalise.fold_chars`), so that Cyrillic or
Greek read the same after the look-alike letters are made Latin, accents do not count, and a
letter written in two forms (Arabic yeh, Hebrew final letters, the candrabindu) is one.

Words are matched as well once a clitic is taken off (:func:`exampp.audit.addressing.forms`):
Arabic and Persian proclitics ("للمقيم" is "مقيم"), Hebrew prefixes, Korean particles, so that a
stem is written bare ("درجة", not "الدرجة"). Turkish, Finnish, Hungarian and the other suffixing
languages need no more than a stem; inflected forms that change the stem are listed ("metin",
"metni"; "cevap", "cevab"). Hindi is listed in Devanagari (its vowel signs kept) with its English
loans ("स्कोर", "रेटिंग") and a few words of Hindi written in Latin letters.

Languages: en de fr es it pt nl sv da no pl cs ru uk tr ar fa he hi zh ja ko vi id el fi hu ro ur bn th
sw tl.
"""
from __future__ import annotations

import re
from functools import lru_cache

from exampp.audit.normalise import fold_chars

CONCEPTS = ("role", "score", "relevant", "top", "textref", "this", "order", "override", "rules", "you", "note",
            "question", "please")

# concept -> stems, space-separated, one string per language family, in this order: en, de, fr, es, it, pt, nl,
# sv da no, pl, cs, ru, uk, tr, ar, fa, he, hi (and Hindi written in Latin letters), zh, ja, ko, vi, id, el, fi,
# hu, ro, ur, bn, th, sw, tl. Stems that are another language's common word are left out or paired
# (French "du", "je", Spanish "ni", Italian "dati", dictionary "adj" are not "you" or "give").
_STEMS: dict[str, tuple[str, ...]] = {
    # who grades: evaluator, assessor, grader, judge, rater, reviewer, annotator, examiner, AI, model
    "role": (
        "evaluator assessor grader =judge judges =judging rater =raters reviewer annotator examiner =ai =llm"
        " =llms =gpt chatgpt =model =models assistant ranker chatbot =bot scorer =labeler =labelers =labeller"
        " language_model =reranker",
        "bewerter gutachter prufer =ki sprachmodell korrektor =richter beurteil =assistent =modell =modells",
        "evaluateur evaluatrice correcteur correctrice =juge =juges annotateur annotatrice examinateur =ia"
        " =modele =modeles assesseur relecteur",
        "evaluador calificador =juez jueces corrector revisor anotador examinador =modelo =modelos =asistente"
        " =jurado",
        "valutatore valutatrice =giudice giudic correttor revisor annotator esaminator =modello =modelli"
        " =assistente intelligenza_artificiale",
        "avaliador corretor =juiz examinador inteligencia_artificial",
        "beoordelaar =jury examinator =taalmodel beoordel",
        "bedomare granskare =domare =sprakmodell bedommer vurderer =dommer =modellen",
        "oceniaj =sedzia =sędzia egzaminator recenzent =modelu =modelem sedzi oceniajac =asystent"
        " sztuczn_inteligencj",
        "hodnotitel posuzovatel =soudce zkousejici recenzent =modelu umel_inteligenc",
        "оценщик асессор эксперт =судья =судье модел нейросет =ии проверяющ экзаменатор рецензент ассистент"
        " оценивающ искусствен_интеллект",
        "оцінювач =суддя =судді перевіряюч =ші модел експерт асистент рецензент штучн_інтелект",
        "degerlendiric degerlendiren =hakem hakeme hakemin hakemler yargic puanlayic =yapay yapay_zek =modele"
        " =modeli =modelin =modeline =modelden =asistan dil_model denetci gozden_geciren",
        "مقيم =حكم =حكام مصحح =نموذج مراجع =مساعد ذكاء_الاصطناعي ذكاء_اصطناعي =محكم مدقق ممتحن",
        "=ارزیاب =ارزیابان =ارزیاب‌ها ارزیابی‌کننده داور مصحح =مدل هوش_مصنوعی =دستیار",
        "מעריך =שופט שופטי בודק =מודל =המודל בינה_מלאכותית",
        "मूल्यांकनकर्ता परीक्षक =जज =जजों निर्णायक =मॉडल =मॉडल्स समीक्षक =एआई =एलएलएम जांचकर्ता जाँचकर्ता"
        " =ग्रेडर =असेसर =इवैल्यूएटर =रेटर मूल्यांकक",
        "评估 評估 评审 評審 评委 評委 评分员 評分員 评分者 評分者 阅卷 閱卷 裁判 模型 人工智能 助手 审核员 審核員 "
        "审稿 審稿 考官 评判 評判 评价者 評價者 机器人 機器人 审阅者 審閱者 评测"
        " 評測",
        "採点者 評価者 審査員 審査者 評価担当 採点担当 モデル アシスタント 審査官 人工知能 判定者 レビュアー "
        "アノテーター",
        "평가자 채점자 심사위원 심사자 평가관 =모델 인공지능 심사관 검토자 리뷰어 어시스턴트 언어모델 채점관 판정자",
        "người_chấm người_đánh giám_khảo =mô_hình người_kiểm =trợ_lý",
        "penilai =juri pemeriksa =model peninjau =hakim =asisten kecerdasan_buatan",
        "αξιολογητ =κριτη =κριτησ =κριτεσ εξεταστ =μοντελο βαθμολογητ τεχνητη_νοημοσυνη",
        "arvioij =tuomari tuomarille arvostelij tarkastaj =malli =mallille =mallin tekoaly =avustaja",
        "ertekelo biralo =biro =bironak =birot =modell =modellnek =modellt pontozo mesterseges_intelligencia"
        " asszisztens",
        "evaluator =arbitru examinator =judecator judecatorul =modelul =modelului corector"
        " inteligenta_artificiala",
        "جانچنے_وال ممتحن =جج =ماڈل =منصف مصنوعی_ذہانت",
        "মূল্যায়নকারী পরীক্ষক =বিচারক =মডেল =এআই কৃত্রিম_বুদ্ধিমত্তা",
        "ผู้ประเมิน ผู้ตรวจ ผู้ให้คะแนน กรรมการ โมเดล ปัญญาประดิษฐ์",
        "mtathmini mkaguzi mtahini =jaji =mwamuzi =modeli akili_bandia",
        "=tagasuri =tagapagsuri =hurado",
    ),
    # a grade and its scale
    "score": (
        "score scoring =grade =grades =graded =grading rating =rated =mark =marks points =label relevance =rank"
        " ranking =labels =labeled =labelled =qrel =qrels",
        "punkt bewertung =noten einstufung relevanz benot =label",
        "notation =score relevance classement la_note une_note sa_note =note_de",
        "puntu =nota =notas calificac valoracion relevancia =puntos puntaje =etiqueta evaluacion",
        "punteggio =voto =voti valutazion rilevanza =punti =etichetta =giudizio pertinenza",
        "pontuac =nota =notas avaliac relevancia =pontos classificac =rotulo pertinencia",
        "=cijfer =cijfers =score beoordeling punten relevantie waardering",
        "poang betyg bedomning relevans karakter bedomm vurdering",
        "=ocena =ocene ocen punkt punktac =stopien istotno trafnosc",
        "=hodnoceni hodnoc =bodu =bod znamk =skore relevanc",
        "оценк оценку балл рейтинг релевантн отметк =очков =очки",
        "оцінк =бал бали =балів =бала рейтинг релевантн",
        "puan derecelendirme degerlendirme =notu =notunu skor =etiket alaka =siralama",
        "درجة درجات تقييم =علامة =علامات =نقاط صلة تصنيف",
        "امتیاز نمره ارزیابی =رتبه",
        "ציון דירוג =נקודות רלוונטיות",
        "स्कोर =अंक =अंकों रेटिंग =ग्रेड रैंक =नंबर प्वाइंट पॉइंट मूल्यांकन =लेबल =ank =ankon",
        "分数 分數 评分 評分 打分 得分 评级 評級 等级 等級 相关度 相關度 分值 相关性 相關性 标签 標籤 评价 評價 "
        "成绩 成績",
        "点数 評価 採点 得点 スコア 評点 ラベル 関連度 格付 ランク",
        "점수 평가 등급 =점 평점 스코어 레이팅 라벨 관련성 채점 레이블",
        "=điểm đánh_giá xếp_hạng =nhãn",
        "=nilai skor peringkat =poin =label relevansi",
        "βαθμ =σκορ συναφει",
        "piste =arvosana arvosan arvio",
        "pontszam =pont ertekeles =pontot osztalyzat relevancia",
        "=scor =scorul =scorului punctaj =nota evaluare relevanta",
        "اسکور =سکور =نمبر =نمبرات ریٹنگ =مارکس",
        "স্কোর =নম্বর রেটিং =মার্ক গ্রেড",
        "คะแนน เกรด",
        "=alama =pointi ukadiriaji",
        "=iskor",
    ),
    # relevant, answers the question
    "relevant": (
        "relevant pertinent =answers =answering =answered =addresses =satisfies =correct",
        "relevant beantwortet einschlagig =richtige =korrekt =korrekte",
        "pertinent =repond =repondent =correcte",
        "relevante pertinente =responde =responden =contesta =contestan =correcto =correcta",
        "rilevante pertinente =risponde =rispondono attinent =corretto =corretta",
        "relevante pertinente =responde =respondem =correto =correta",
        "relevant beantwoordt",
        "relevant besvarar besvarer =svarer",
        "istotn trafn odpowiada",
        "relevantn odpovida",
        "релевант отвечает соответствует =правильный =правильная =правильной =правильную =правильное",
        "релевант відповідає",
        "ilgili alakali yanitl cevapl iliskili karsiliyor dogru_etiket dogru_puan dogru_not dogru_cevap"
        " dogru_yanit",
        "صلة وثيق يجيب تجيب =مرتبط ملائم ملاءم =متعلق =متعلقة",
        "مرتبط پاسخ =مربوط",
        "רלוונטי עונה",
        "प्रासंगिक संबंधित सम्बन्धित prasangik रिलेवें रेलेवें =उत्तर_देता =उत्तर_देती =जवाब_देता =जवाब_देती"
        " =सही_लेबल =सही_उत्तर =सही_जवाब =सही_अंक =सही_स्कोर",
        "相关 相關 回答了 切题 切題 符合 契合 相符 匹配 切合 正确 正確",
        "関連 関係 回答している 回答しています 答えている 答えています 適合 合致 該当 正しい",
        "관련 적합 답변 부합 답하 답합 일치 올바른 정확한",
        "liên_quan trả_lời phù_hợp",
        "relevan menjawab berkaitan",
        "σχετικ απαντα",
        "relevantti vastaa",
        "relevans =valaszol",
        "relevant raspunde",
        "=متعلقہ مطابقت",
        "প্রাসঙ্গিক",
        "เกี่ยวข้อง ตรงประเด็น",
        "=inahusiana =yanahusiana =inahusika =inajibu =yanajibu",
        "=kaugnay",
    ),
    # the top of a scale
    "top": (
        "maximum =max highest perfect =full =fully =best =top excellent complete =maximal =maximally",
        "hochst maximal perfekt =voll =volle =vollen =volles vollstandig =beste bestnote",
        "maximal =parfait parfaitement meilleur complet =totalement =plein =pleine entierement =totale",
        "maxim =perfecto =perfecta perfectamente =mejor completo completamente =plena totalmente mas_alt"
        " sobresalient excelent",
        "massim perfett miglior completamente pieno =piena pienamente piu_alt totalment eccellent del_tutto",
        "maxim perfeit melhor completamente mais_alt totalmente =plena =pleno",
        "hoogst maximal maximaa perfect =volle volledig =beste",
        "hogsta maximal maksimal perfekt =full =fulde fullstandig fullstendig fuldstaendig basta hoyest hojest",
        "maksymaln najwyzs =pelna =pelni doskonal idealn calkowic",
        "maximal nejvyss =plne dokonal nejlepsi uplne",
        "максимал максимум высш наивысш идеальн полност =полный полное совершенн лучш",
        "максимал максимум вищ найвищ ідеальн повніст =повну =повна найкращ",
        "en_yuksek en_ust =tam mukemmel tamamen maksimum azami =kusursuz =eksiksiz en_iyi",
        "أعلى =القصوى =قصوى اقصى أقصى كامل ممتاز =تماما =تام =تامة مثالي =أفضل",
        "بالاترین حداکثر کامل =کاملا =بیشترین =عالی",
        "גבוה מקסימל מושלם =מלא =מלאה לחלוטין",
        "अधिकतम =उच्चतम =पूर्ण =पूरी =पूरा =पूरे सर्वोच्च =सबसे_ऊंची =सबसे_ऊंचा =सबसे_अधिक =सर्वश्रेष्ठ उत्कृष्ट"
        " =सबसे_ज्यादा =सबसे_अच्छा =टॉप",
        "满分 滿分 最高 完全 完美 最佳 顶级 頂級 极高 極高 最大",
        "満点 最高 完全 完璧 十分 最大",
        "만점 최고 완벽 완전 최대 가장_높은",
        "tối_đa cao_nhất hoàn_hảo hoàn_toàn",
        "maksimal tertinggi sempurna sepenuhnya",
        "μεγιστ υψηλοτερ τελει πληρως",
        "korkein =taysi taydelli taysin",
        "maximalis legmagasabb tokeletes teljes",
        "maxim =perfect complet",
        "=مکمل =پورے =پوری =اعلیٰ =بہترین =زیادہ_سے",
        "সর্বোচ্চ =পূর্ণ সম্পূর্ণ =পুরো",
        "สูงสุด เต็ม สมบูรณ์ ดีที่สุด",
        "=kamili =kikamilifu =upeo =bora",
        "=pinakamataas =buong =perpekto =ganap",
    ),
    # what is graded: this passage, text, document, answer
    "textref": (
        "passage =text =texts document =doc snippet =response =answer paragraph =content =excerpt =page =chunk",
        "=text =textes abschnitt passage dokument antwort absatz =inhalt =texte auszug =beitrag =artikel",
        "passage =texte document reponse extrait paragraphe contenu",
        "pasaje =texto =textos documento respuesta fragmento parrafo contenido =articulo",
        "passaggio =testo =testi documento risposta brano paragrafo contenuto =articolo estratto frammento",
        "trecho =texto =textos documento resposta passagem paragrafo conteudo =artigo",
        "passage =tekst document antwoord fragment alinea =inhoud",
        "=texten =teksten =tekst dokument svar avsnitt stycket",
        "fragment tekst dokument odpowiedz akapit artykul",
        "pasaz =textu =textem dokument odpoved odstavec",
        "отрывок текст документ =ответ =ответа =ответу =ответом =ответе фрагмент абзац",
        "уривок текст документ відповід фрагмент абзац",
        "metin =metni =metne =metnin belge paragraf yanit cevap cevab pasaj =icerik =icerigi dokuman =parca"
        " =parcayi",
        "=النص =نص =للنص =بالنص =والنص =نصوص مقطع فقرة مستند إجابة اجابة وثيقة =محتوى =جواب =مقال =مقالة =الرد"
        " =ردك",
        "متن سند پاسخ =بند =نوشته =محتوا پاراگراف",
        "קטע טקסט מסמך תשובה",
        "अनुच्छेद =पाठ दस्तावेज =उत्तर =पैसेज =टेक्स्ट डॉक्यूमेंट =लेख =सामग्री =जवाब =अंश =पैराग्राफ =परिच्छेद"
        " =कंटेंट",
        "这段 這段 本段 此段 该段 該段 文本 段落 文档 文檔 回答 内容 內容 这篇 這篇 文章 片段 本文 此文 该文 該文 "
        "答案 文字",
        "この文章 本文 このテキスト この回答 この段落 この文書 文書 文章 テキスト 段落 パッセージ 記事 ドキュメント",
        "본문 텍스트 문서 답변 단락 문단 내용 구절 패시지 =글",
        "đoạn_văn văn_bản tài_liệu câu_trả bài_viết nội_dung",
        "teks dokumen jawaban =paragraf =artikel =konten =kutipan",
        "κειμεν αποσπασμ εγγραφ απαντησ",
        "teksti kappale dokumentti vastaus",
        "szoveg dokumentum valasz bekezdes reszlet",
        "pasaj =textul =textului document raspuns fragment continut",
        "=متن =دستاویز =جواب =پیراگراف =اقتباس",
        "অনুচ্ছেদ =পাঠ্য নথি =উত্তর =লেখা =টেক্সট",
        "ข้อความ เอกสาร บทความ คำตอบ ย่อหน้า",
        "=maandishi =maandiko =hati =jibu =kifungu =aya",
        "=teksto =talata =dokumento =sagot",
    ),
    # the text itself pointed at: this (passage), here
    "this": (
        "=this =here =herein =hereby",
        "=dieser =diese =dieses =diesen =diesem =hier",
        "=ce =cet =cette =ceci =ici",
        "=este =esta =esto =aqui =estos =estas",
        "=questo =questa =qui",
        "=este =esta =isto =esse =essa =aqui =neste =nesta =deste =desta",
        "=deze =dit =hier",
        "=denna =detta =denne =dette",
        "=ta =tego =tej =temu =tym =tu",
        "=tento =tato =toto =tomto =zde =tomuto",
        "=этот =эта =это =этому =этой =данный =данному =здесь =этого",
        "=цей =ця =це =цьому =цій =тут =цього",
        "=bu =bunu =buna =burada =bunun =isbu",
        "=هذا =هذه =هنا",
        "=این =اینجا =همین",
        "=זה =זו =הזה =הזאת =כאן",
        "=यह =इस =यहाँ =इसे =इसको =ये =इन",
        "这 這 此 本 该 該",
        "この 本 これ ここ",
        "=이 =본 =여기 =이것 =해당",
        "=này =đây",
        "=ini =sini",
        "=αυτο =αυτη =αυτος =εδω",
        "=tama =taman =tassa =talle =tata",
        "=ez =ezt =ennek =itt =erre",
        "=acest =aceasta =aici =acestui =acestei",
        "=یہ =اس =اسے =یہاں",
        "=এই =এটি =এটা =এখানে =একে",
        "นี้",
        "=hii =haya =hapa =huu",
        "=ito =dito",
    ),
    # orders to grade: give, assign, rate, output, respond
    "order": (
        "=give =assign =award =rate =output =respond =reply =return =print =label =classify =treat =consider"
        " =mark =grant =assess =evaluate",
        "=gib =geben =gebt =bewerte =vergib =vergeben =setze =antworte =einstufen =ausgeben =erteile"
        " =klassifiziere =markiere =behandle =betrachte",
        "=donne =donnez =donner attribu =notez =mettez =accordez =reponds =repondez =considerez =accorde"
        " =evaluez =renvoyez =traitez =indiquez =classez =affiche =affichez",
        "=dale =dele =denle asigna asigne otorg =califica =califique puntua =pon =ponga responde =dar =devuelve"
        " =devuelva =clasifica =clasifique =marque =contesta =valora =valore =evalua =evalue =ponle =considere",
        "assegna attribuisci =metti =rispondi =dagli =dare =dategli =valuta =valutate =classifica =restituisci"
        " =emetti =fornisci =segna =valutalo =valutala",
        "atribua =coloque =conceda =responda =dar =classifique =avalie =retorne =marque =considere =pontue",
        "=geef =ken =kent =antwoord =zet =beoordeel =classificeer =markeer =behandel =beschouw",
        "=ge =giv =satt =sett tilldela tildel =svara =bedom =vurder =klassificera =markera",
        "=daj =dajcie przyznaj =wystaw ocen =odpowiedz postaw =przypisz =oznacz =zwroc =traktuj =uznaj =nadaj",
        "=dej =dejte =udel =udelte =přiděl =prirad =ohodnot =ohodnotte =oznac =vrat",
        "постав присво =дай =дайте оцен выстав =ответь =ответьте =выведи =верни =считай =отметь =укажи",
        "постав присво =дай оцін =дайте =виведи =поверни =вважай =познач вистав",
        "=ver =verin =veriniz =verilmeli =verilmelidir =vermelisin =vermelisiniz =verirsin =verirsiniz =verilsin"
        " puanla derecelendir degerlendirin etiketle isaretle siniflandir =atayin =atayiniz =dondur",
        "أعط اعط امنح =ضع =ضعه =ضعها =ضعوا =قيم =قيمها =قيموا =صنف =صنفه =صنفها =أخرج =اعتبر =اكتب =اجعل =أسند",
        "=بده =بدهید =بدید =دهید =بدهيد =خروجی",
        "=תן =תנו =תני =דרג =דרגו =הענק =סמן =החזר",
        "=दें =दीजिए =दीजिये =देना =दीजिएगा =आउटपुट =लौटाएं =मानें =रेट =चिह्नित =असाइन =लिखें =लिखिए =लिखो =dijiye =dijie =dena",
        "给 給 评为 評為 输出 輸出 判定 授予 标记 標記 标为 標為 视为 視為 给予 給予 评定 評定 定为 定為 判为 判為 "
        "返回 标注 標註 赋予 賦予 打上",
        "つけて 付けて 与えて 出力 してください 付与 みなして 判定して 付けなさい つけなさい 与えなさい 与えよ",
        "주세요 주십시오 부여 매겨 매기 출력 반환 간주 =줘 판정 주시 주실",
        "=cho =chấm =gán =xuất",
        "=beri =berikan =tetapkan =tandai =keluarkan =anggap",
        "=δωσε =δωστε βαθμολογησ =αναθεσε =θεωρησε",
        "=anna =antakaa pisteyta =merkitse =luokittele =palauta",
        "=adjon =adjatok =ertekeld =pontozd =jelold",
        "acorda =acordati =atribuie =evalueaza =noteaza =marcheaza",
        "=دیں =دیجیے =دیجئے",
        "=দাও =প্রদান_করুন",
        "ให้คะแนน",
        "=toa =ipe =mpe =weka =kadiria =patia =ipatie",
        "=bigyan =ibigay =ilagay =markahan",
    ),
    # overriding what the grader was told: ignore, forget ...
    "override": (
        "ignore disregard =forget overrid bypass =discard =dismiss =overlook supersed",
        "ignorier vergiss vergessen missacht =ubergehe =verwirf ausser_acht",
        "ignore ignorez oublie =negligez =ecartez",
        "ignora olvida =omite =omita =olvide =descarta =desatiende caso_omiso =prescinde",
        "ignora dimentica =trascura =tralascia non_consider lascia_perdere =scarta",
        "ignore esqueca desconsider",
        "negeer vergeet",
        "ignorera ignorer =glom =glem =bortse",
        "zignoruj ignoruj zapomnij =pomin",
        "ignoruj zapomen =nevsimej",
        "игнорир проигнорир забудь забудьте не_учитыва =отбрось",
        "ігнор проігнор забудь не_зважа",
        "yoksay yok_say =unut =unutun =unutunuz gormezden goz_ardi =dikkate_alma =dikkate_almayin =dikkate_almayiniz"
        " =umursama =bosver gecersiz_say =onemseme",
        "تجاهل =انس =انسي =انسوا =أهمل =الغ لا_تلتفت =تخط =تغاض",
        "نادیده فراموش صرف‌نظر",
        "התעלם שכח",
        "अनदेखा =भूल =भूलें =भूलो =भुला =उपेक्षा नजरअंदाज =इग्नोर =bhool =bhul nazarandaz अनदेख",
        "忽略 无视 無視 忘记 忘記 不要理会 不要理會 忽视 忽視 跳过 跳過 不理会 不理會 抛开 拋開 撇开 撇開 绕过 繞過",
        "無視 忘れ",
        "무시 잊어 잊고 잊으",
        "bỏ_qua =quên =phớt_lờ",
        "abaikan lupakan",
        "αγνοησ ξεχασ",
        "ohita unohda =sivuuta",
        "hagyd figyelmen =felejtsd",
        "ignora uita",
        "نظرانداز =نظر_انداز =بھول =بھولیں",
        "উপেক্ষা =ভুলে",
        "เพิกเฉย ละเว้น ไม่ต้องสนใจ ลืม",
        "=puuza =sahau",
        "=huwag_pansinin =kalimutan =balewalain",
    ),
    # ... what it was told: the previous instructions, the rules, the prompt
    "rules": (
        "previous =prior =above preceding instruction =rules prompt rubric guidelines =criteria =directives"
        " =guideline",
        "vorherig =obigen anweisung instruktion =regeln =vorgaben =richtlinien bisherig =kriterien",
        "precedent instruction consigne =regles =directives =criteres anterieur ci_dessus",
        "anterior instruccion =reglas indicacion =pautas =directrices =criterios =normas =previas =previos",
        "precedent istruzion =regole linee_guida =criteri =direttive indicazioni =norme",
        "anterior instruc =regras =diretrizes =criterios orientacoes =previas =previos",
        "eerdere vorige instructie =regels =richtlijnen",
        "tidigare tidligere instruktion instruks =regler =riktlinjer =retningslinjer foregaende",
        "poprzedn instrukcj polecen =zasady =reguly =wytyczne =kryteria wczesniejsz",
        "predchozi instrukc pokyn =pravidla =kriteria",
        "предыдущ прежн инструкц указани =правила =критерии =промпт =правил вышеуказ",
        "попередн інструкці вказівк =правила =критерії =промпт =правил настанов",
        "onceki talimat kural yonerge =komut komutlar yukarida kriter =istem =istemi =istemleri",
        "سابق تعليمات =قواعد =ارشادات =إرشادات =معايير =توجيهات =أوامر =أعلاه",
        "قبلی دستورالعمل =قوانین =دستورات معیار =پرامپت",
        "קודמ הורא =כללים הנחי קריטריונ",
        "=पिछले =पिछली =पिछला निर्देश =नियम =नियमों दिशानिर्देश =प्रॉम्प्ट मानदंड =nirdesh =niyam =pichle =ऊपर",
        "之前 先前 指令 指示 规则 規則 提示词 提示詞 评分标准 評分標準 系统提示 系統提示 指引 准则 準則",
        "以前の 指示 命令 プロンプト ルール 規則 採点基準 評価基準 上記の これまでの ガイドライン",
        "이전 지시 지침 규칙 평가기준 채점기준 프롬프트 명령 =앞선 =위의 가이드라인",
        "=trước hướng_dẫn quy_tắc chỉ_thị tiêu_chí",
        "sebelumnya instruksi =aturan pedoman petunjuk kriteria",
        "προηγουμεν οδηγι κανον κριτηρι",
        "aiemm ohjee =saannot kriteer edelli",
        "elozo utasitas szabaly iranyelv korabbi",
        "anterioare instructiun =reguli =regulile =criterii",
        "=پچھلی =پچھلے ہدایات =اصول",
        "=আগের পূর্ববর্তী নির্দেশ নিয়ম",
        "คำสั่ง คำแนะนำ ก่อนหน้า เกณฑ์",
        "=maagizo =maelekezo =awali =kanuni",
        "=naunang tagubilin =panuto =patakaran",
    ),
    # a second person addressed
    "you": (
        "=you =your =yourself",
        "=du_bist =du_musst =du_sollst =du_kannst =bist_du =hast_du =dich =dir =ihr =sie =ihnen =dein =deine"
        " =deinen =euch",
        "=vous =tu =te =toi =votre =vos",
        "=usted =ustedes =tu =te =debes =debe =eres =vosotros",
        "=tu =voi =lei =devi =sei",
        "=voce =você =voces =tu =deve",
        "=jij =je_bent =je_moet =je_kunt =uw =jouw =jullie",
        "=dig =deg =dere =du_ar =du_maste =du_ska =du_er =du_skal =ni_ar =ni_maste",
        "=ty =wy =pani =panie =panu =pana =musisz",
        "=ty =vy =musis =vam",
        "=ты =вы =тебе =вам =вас =должен =должны",
        "=ти =ви =тобі =вам =тебе",
        "=sen =siz =sana =size =seni =sizi =senin =sizin",
        "=أنت =انت =أنتم =عليك =عليكم =لك =أيها =بصفتك =حضرتك",
        "=شما =تو",
        "=אתה =אתם עליכ",
        "=आप =तुम =आपको =आपका =आपकी =आपके =तुम्हें =तू =aap",
        "你 您",
        "あなた 貴方",
        "당신 귀하 여러분 =너",
        "=bạn",
        "=anda =kamu =engkau",
        "=εσυ =εσεις =σας",
        "=sina =te =sinun =teidan",
        "=te",
        "=tu =voi =dumneavoastra =esti",
        "=آپ =تم",
        "=আপনি =তুমি =আপনাকে =তোমাকে",
        "ท่าน",
        "=wewe =nyinyi =unapaswa",
        "=ikaw =kayo =ninyo",
    ),
    # a note or message to someone
    "note": (
        "=note =notice attention =message =reminder =dear =memo =hint =disclaimer =instructions =instruction"
        " system_message system_prompt system_note system_instruction",
        "hinweis =notiz achtung =liebe =lieber =wichtig nachricht systemnachricht systemhinweis",
        "=note =remarque attention =cher =chere =message =avis message_systeme",
        "=nota aviso atencion =estimado =estimada =mensaje =importante =querido =querida",
        "=nota avviso attenzione =caro =cara =gentile messaggio =importante =egregio promemoria",
        "=nota aviso atencao =caro =prezado =prezada mensagem =importante",
        "=opmerking let_op =beste =geachte bericht belangrijk",
        "=notering observera =kara viktigt meddelande =obs bemaerk",
        "=uwaga =notatka =drogi =droga wiadomosc wazne",
        "=poznamka upozorneni =mily =vazeny zprava",
        "примечани внимани =заметка сообщени уважаем =дорогой важно системн_сообщени",
        "примітк уваг =шановн повідомлен",
        "=dikkat =sayin mesaj onemli hatirlatma uyari sistem_not sistem_mesaj",
        "ملاحظة ملحوظة تنبيه =عزيزي رسالة هام =مهم تنويه =انتباه",
        "توجه =یادداشت =پیام مهم =گرامی",
        "הערה לתשומת =הודעה חשוב שימו_לב",
        "नोट =ध्यान_दें =प्रिय =संदेश =सूचना सिस्टम_संदेश",
        "注意 提示 致评 致評 致审 致審 致模型 致阅卷 致閱卷 说明 說明 备注 備註 请注意 系统消息 系統消息 系统通知 "
        "系統通知 提醒",
        "注意 お知らせ メモ 重要 皆様 注記 備考 システムメッセージ",
        "참고 주의 안내 중요 메시지 메모 알림 시스템_메시지 공지 노트",
        "lưu_ý =gửi =kính chú_ý",
        "=catatan perhatian =kepada",
        "σημειωσ προσοχ αγαπητ",
        "huomio =huom viesti",
        "megjegyzes figyelem =kedves =szamara",
        "=nota atentie =catre =stimate",
        "=نوٹ =توجہ =پیغام =محترم =گزارش",
        "=নোট =মনোযোগ =বার্তা =প্রিয়",
        "หมายเหตุ โปรดทราบ",
        "=kumbuka =tahadhari =ujumbe =mpendwa",
        "=paalala =mensahe",
    ),
    # what the grader was asked
    "question": (
        "question query =queries =search =topic =request =exam information_need",
        "=frage =anfrage suchanfrage fragestellung",
        "question requete recherche",
        "pregunta consulta busqueda",
        "domanda =domande =query ricerca",
        "pergunta consulta",
        "=vraag zoekvraag zoekopdracht",
        "=fraga =fragan sokning =sporsmal =sporgsmal",
        "pytani zapytani",
        "otazk dotaz",
        "вопрос запрос",
        "питанн запит",
        "=soru =soruyu =soruya =sorunun =sorusu =sorular sorgu =arama",
        "=سؤال =السؤال =بالسؤال =للسؤال استعلام استفسار =بحث",
        "پرسش سوال",
        "שאלה שאילת",
        "प्रश्न सवाल =क्वेरी =sawal =खोज",
        "问题 問題 查询 查詢 检索词 檢索詞 搜索词 搜索詞",
        "質問 問い クエリ 検索",
        "질문 질의 쿼리 검색어 검색",
        "câu_hỏi truy_vấn",
        "pertanyaan =kueri",
        "ερωτησ",
        "kysymy",
        "kerdes",
        "intrebare =interogare",
        "=سوال =سوالات =استفسار",
        "প্রশ্ন =কোয়েরি",
        "คำถาม คำค้น",
        "=swali =maswali",
        "=tanong",
    ),
    # asking politely
    "please": (
        "=please =kindly =pls =plz",
        "bitte",
        "=svp =plait =veuillez",
        "por_favor =ruego favor_de",
        "=favore =cortesemente la_preghiamo ti_prego",
        "por_favor",
        "alstublieft =aub =alsjeblieft",
        "=snalla =vanligen =venligst =vennligst",
        "=prosze",
        "=prosim",
        "пожалуйста",
        "будь_ласка",
        "=lutfen rica",
        "=رجاء =الرجاء يرجى =أرجو من_فضلك =نرجو",
        "=لطفا خواهشمند",
        "=בבקשה =נא",
        "=कृपया =कृपा =अनुरोध =kripya =kripaya =निवेदन",
        "请 請",
        "ください 下さい お願い",
        "주세요 바랍니다 부탁 제발 부디",
        "vui_lòng =xin",
        "=mohon =tolong =silakan",
        "=παρακαλω",
        "ole_hyva",
        "=kerem =kerlek",
        "=va_rog =te_rog",
        "=براہ_کرم =برائے_مہربانی =مہربانی",
        "=অনুগ্রহ =দয়া_করে অনুগ্রহপূর্বক",
        "กรุณา โปรด",
        "=tafadhali",
        "=pakiusap",
    ),
}

# Scripts written without spaces: a stem in them matches anywhere in a word.
UNSPACED = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
UNSPACED_CHAR = re.compile(f"[{UNSPACED}]")
PREFIX_MIN = 2  # the shortest word start looked up (a one-letter stem never matches)


@lru_cache(maxsize=1)
def tables() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(stem -> concepts for word starts, whole word -> concepts, unspaced stem -> concepts), folded."""
    prefix: dict[str, set[str]] = {}
    exact: dict[str, set[str]] = {}
    unspaced: dict[str, set[str]] = {}
    for concept, families in _STEMS.items():
        for family in families:
            for entry in family.split():
                whole = entry.startswith("=")
                stem = fold_chars(entry.lstrip("=").replace("_", " "))
                if UNSPACED_CHAR.search(stem):
                    unspaced.setdefault(stem, set()).add(concept)
                elif whole:
                    exact.setdefault(stem, set()).add(concept)
                else:
                    prefix.setdefault(stem, set()).add(concept)
    def freeze(table: dict[str, set[str]]) -> dict[str, frozenset[str]]:
        return {key: frozenset(value) for key, value in table.items()}

    return freeze(prefix), freeze(exact), freeze(unspaced)
